"""A run assembled from a YAML config and command-line flags, shared by `cli/` (training, the dry run) and `probe/`:
the assembled settings, the trainer built from them, the batch arithmetic, the memory plan, the distributed launch
and who owns the process."""
