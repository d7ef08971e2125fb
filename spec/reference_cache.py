"""What decides the reference model's log-probabilities of a dataset, so that a cached copy is reused exactly when
they would come out the same.

The reference cache (option `reference_cache`) keys each stored set of log-probabilities twice:

- **when the run starts** (exact, authoritative): a SHA-256 of the reference weights as loaded (TRL's own
  `hash_module`, dtype included; for a LoRA policy whose fresh adapter adds exactly nothing, the base weights
  alone, as a full fine-tuning run of the checkpoint has them); of what else the forward reads: the model class
  (and a remote-code class's source), its config (rotary scaling, norm epsilon...), its buffers, whether dropout
  is live, the attention implementation and a reference adapter's settings; of the tokenized rows the reference
  pass reads (token ids, so the rows and the chat template are in it); of the TRL fields named here as TRL
  resolved them; and of the TRL, transformers and PEFT releases (a transformers release can change a forward);
- **before anything loads** (the dry run's forecast): the options named here, the `model` section, the model
  folder's files (names, sizes, modification times), the datasets' rows and those releases. A plain LoRA adapter
  is left out (it adds nothing until it trains); one with DoRA or module copies is in, with the seed its initial
  weights (and TRL's reference copy of them) are drawn from.

An option left out of both lists cannot change a reference log-probability: the loss and its weights (beta,
loss_type of the DPO family, label smoothing), the optimizer and its schedule, the run's length, logging, saving,
evaluation cadence. A sweep over those reuses the cache.
"""

REFERENCE_PASS_FIELDS = (
    "max_length", "truncation_mode", "pad_token", "padding_free", "pad_to_multiple_of", "ld_alpha",
    "disable_dropout", "bf16", "fp16", "tf32", "use_liger_kernel", "liger_kernel_config", "torch_compile",
    "trust_remote_code",
)  # fmt: skip
"""TRL fields (and the TextRL options of the same names) that change the reference pass: tokenisation, the
forward's layout and precision, LD-DPO's length weighting. Fields a config lacks are skipped."""

BATCH_PAIRED_FIELDS = ("per_device_train_batch_size", "precompute_ref_batch_size", "loss_type")
"""KTO only: its KL term pairs each completion with a neighbour's prompt inside the precompute batch, and loss_type
decides whether that term is computed (kto) or not (apo_zero_unpaired)."""

FORECAST_SECTIONS = ("model", "extra")
"""Whole config sections that go into the dry run's forecast: the model (name, revision, dtype, LoRA, quantization,
attention) and any TRL field passed through `extra`."""
