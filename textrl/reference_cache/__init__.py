"""The reference cache: the reference model's log-probabilities of a dataset, computed once and reused by later runs
(`store`), the key that names an entry (`key`), and the decision whether a run uses it (`plan`)."""
