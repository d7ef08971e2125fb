"""The machine and the engines that run on it: the accelerator probes (`hardware`), the distributed launch
(DDP, DeepSpeed ZeRO, FSDP) and what accelerate and TRL get for it (`distributed`), bitsandbytes quantization
(`quantization`), and who owns the process, for what a signal may do to it (`process_owner`). Imports no torch
at import time."""
