"""What is specific to TRL and its releases: building TRL's config object from a TextRL config (`build`), what a
config meets on the installed release (`releases`), what TextRL absorbs of an older release at run time (`compat`),
and the installed versions (`env`)."""
