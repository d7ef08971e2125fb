"""What a run keeps on disk and how: the names of its files, atomic saves, the fingerprint a resume checks, the
manifest, the output folder's state before a run, what `--overwrite` may replace, and the one-run-per-folder lock."""
