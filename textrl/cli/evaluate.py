"""`textrl-eval`: generate completions for a dataset's prompts in batches, score them, print statistics per reward."""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError, Problem, RewardError


def _whole(low: int, hint: str = "") -> Any:
    """An argparse type: an integer >= low, refused at parse time with what is allowed and the fix."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"got {text!r}; allowed: an integer >= {low}{hint}") from None
        if value < low:
            raise argparse.ArgumentTypeError(
                f"got {value}; allowed: an integer >= {low}{hint}. Fix: use a value >= {low}"
            )
        return value

    return parse


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"got {text!r}; allowed: a number >= 0 (0 means greedy)") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"got {text}; allowed: a finite number >= 0 (0 means greedy). Fix: e.g. --temperature 0.7"
        )
    return value


def eval_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textrl-eval", description="Generate and score completions; no training.")
    parser.add_argument(
        "--model", required=True, help="A checkpoint folder, a hub id, a .gguf file, textrl:tiny or textrl:smollm2."
    )
    parser.add_argument("--gguf-file", default=None, help="A GGUF file inside the --model folder.")
    parser.add_argument("--dataset", required=True, help="A local .jsonl/.json/.csv/.parquet file or a hub dataset id.")
    parser.add_argument("--split", default="train", help="Split, with slicing such as test[:100] (default: train).")
    parser.add_argument("--subset", default=None, help="Hub dataset configuration name.")
    parser.add_argument(
        "--reward",
        action="append",
        required=True,
        metavar="MODULE:FUNCTION",
        help="A reward function: module:function (a module importable from the working directory) or "
        "path/to/file.py:function (relative to the working directory); repeat for several (each is reported "
        "separately).",
    )
    parser.add_argument("--batch-size", type=_whole(1), default=8, help="Prompts generated together (default 8).")
    parser.add_argument("--max-new-tokens", type=_whole(1), default=64, help="Tokens per completion (default 64).")
    parser.add_argument("--num-generations", type=_whole(1), default=1, help="Completions per prompt (default 1).")
    parser.add_argument("--temperature", type=_temperature, default=1.0, help="Sampling temperature; 0 means greedy.")
    parser.add_argument("--seed", type=_whole(0), default=0, help="Random seed for sampling (default 0).")
    parser.add_argument(
        "--limit",
        type=_whole(1, " (leave --limit out to use every row)"),
        default=None,
        help="Use only the first N prompts (default: every row).",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="FILE.jsonl",
        help="Write every prompt, completion and reward here (a new file, unless --overwrite).",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="Replace an existing --output file (never one of the command's inputs).",
    )
    return parser


def _load_prompts(args: argparse.Namespace) -> Any:
    from ..data import check_dataset, from_hub, from_jsonl

    path = Path(args.dataset)
    if path.suffix == ".jsonl" and path.is_file() and args.split == "train":
        data = from_jsonl(path)
    else:
        data = from_hub(args.dataset, split=args.split, subset=args.subset)
    data = check_dataset(data, "prompt-only")
    return data.select(range(min(args.limit, len(data)))) if args.limit is not None else data


def generate(model: Any, tokenizer: Any, prompts: list[Any], args: argparse.Namespace) -> list[str]:
    """Completions for `prompts` (num_generations each, in order), batch by batch. The progress bar counts tokens
    as they are generated, so a slow batch (a real model on a CPU) shows it is moving, not a minute at 0/4."""
    import torch
    from tqdm import tqdm
    from transformers import StoppingCriteria, StoppingCriteriaList

    class TokenProgress(StoppingCriteria):
        """Called by generate() after every new token of the batch; stops nothing."""

        def __init__(self, bar: Any, width: int) -> None:
            self.bar, self.width, self.done = bar, width, 0

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            self.bar.update(self.width)
            self.done += 1
            return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)

    tokenizer.padding_side = "left"
    texts = [
        p if isinstance(p, str) else tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
        for p in prompts
    ]
    sampling = {"do_sample": True, "temperature": args.temperature} if args.temperature > 0 else {"do_sample": False}
    out: list[str] = []
    model.eval()
    starts = range(0, len(texts), args.batch_size)
    total = len(texts) * args.num_generations * args.max_new_tokens
    with tqdm(total=total, desc="generating", unit="tok") as bar:
        for number, start in enumerate(starts, 1):
            bar.set_postfix_str(f"batch {number}/{len(starts)}")
            chunk = texts[start : start + args.batch_size]
            batch = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
            progress = TokenProgress(bar, len(chunk) * args.num_generations)
            with torch.no_grad():
                ids = model.generate(
                    **batch,
                    max_new_tokens=args.max_new_tokens,
                    num_return_sequences=args.num_generations,
                    pad_token_id=tokenizer.pad_token_id,
                    stopping_criteria=StoppingCriteriaList([progress]),
                    **sampling,
                )
            bar.update(progress.width * (args.max_new_tokens - progress.done))  # a batch that ended early (EOS)
            out += tokenizer.batch_decode(ids[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    return out


def say(text: str) -> None:
    """A line on stderr saying what the command is doing (stdout holds the results)."""
    print(f"textrl-eval: {text}", file=sys.stderr, flush=True)


def _device() -> str:
    import torch

    if torch.cuda.is_available():
        return "cuda"
    return "mps" if torch.backends.mps.is_available() else "cpu"


def as_completion(text: str, prompt: Any) -> Any:
    """A completion in TRL's shape: text for text prompts, `[{"role": "assistant", ...}]` for chat prompts."""
    return text if isinstance(prompt, str) else [{"role": "assistant", "content": text}]


def summarize(scores: dict[str, list[float | None]]) -> str:
    """One line per reward: count, mean, std, min, 10th/50th/90th percentiles and max (None values skipped)."""
    w = max(len("reward"), *(len(name) for name in scores))
    lines = [f"{'reward':<{w}} {'n':>5} {'mean':>9} {'std':>9} {'min':>9} {'p10':>9} {'p50':>9} {'p90':>9} {'max':>9}"]
    for name, values in scores.items():
        kept = sorted(v for v in values if v is not None)
        if not kept:
            lines.append(f"{name:<{w}} {0:>5}  (every completion skipped)")
            continue
        deciles = statistics.quantiles(kept, n=10, method="inclusive") if len(kept) > 1 else [kept[0]] * 9
        std = statistics.pstdev(kept)
        lines.append(
            f"{name:<{w}} {len(kept):>5} {statistics.fmean(kept):>9.4f} {std:>9.4f} {kept[0]:>9.4f} "
            f"{deciles[0]:>9.4f} {deciles[4]:>9.4f} {deciles[8]:>9.4f} {kept[-1]:>9.4f}"
        )
    return "\n".join(lines)


def _refused(output: Path, text: str) -> ConfigError:
    return ConfigError([Problem("--output", f"{output} {text}")])


def check_output(args: argparse.Namespace) -> None:
    """`--output` is a file this command may write, checked before the model loads: not a folder, not a file the
    command reads (even with --overwrite), not an existing file without --overwrite, and in a folder that exists or
    can be made and is writable."""
    from ..checkpoints.overwrite import inputs, model_inputs, module_file
    from ..rewards.refs import is_file_ref, ref_path

    output: Path = args.output
    if output.is_dir():
        example = output / "scores.jsonl"
        raise _refused(output, f"is a folder; --output takes a file. Fix: give a file name, e.g. {example}.")
    if output.exists():
        cwd = Path.cwd()
        pairs: list[tuple[str, Path | str | None]] = [(f"--dataset {args.dataset}", args.dataset)]
        pairs += model_inputs(f"--model {args.model}", args.model, cwd)
        pairs += [
            (f"the module of --reward {ref}", ref_path(ref, cwd) if is_file_ref(ref) else module_file(ref, cwd))
            for ref in args.reward
        ]
        target = output.resolve()
        for item in inputs(pairs):
            if item.path == target or item.path in target.parents:
                raise _refused(
                    output,
                    f"is {item.what} ({item.path}), which this command reads; writing the scores there would "
                    "destroy it (--overwrite does not change that). Fix: write them to a new file, e.g. --output "
                    "scores.jsonl.",
                )
        if not args.overwrite:
            raise _refused(output, "exists. Fix: choose a new file, or pass --overwrite to replace it.")
    folder = output.parent
    while not folder.exists() and folder != folder.parent:  # the folders to be made: check where they would go
        folder = folder.parent
    if not folder.is_dir():
        raise _refused(
            output,
            f"cannot be written: {folder} is a file, not a folder. Fix: choose a path in a folder, e.g. --output "
            f"{folder.parent / 'scores.jsonl'}.",
        )
    try:  # a real write, as root too (os.access says yes to root even on a read-only mount)
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".textrl-eval-probe-")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise _refused(
            output,
            f"cannot be written: creating a file in {folder} failed ({exc.strerror or exc}). Fix: choose a folder "
            "you can write to, e.g. --output scores.jsonl.",
        ) from None


def write_rows(output: Path, rows: list[dict[str, Any]]) -> None:
    """Write the rows as JSON lines, all or nothing (textrl.checkpoints.atomic.write_text)."""
    from ..checkpoints.atomic import write_text

    output.parent.mkdir(parents=True, exist_ok=True)
    write_text(output, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def eval_main(argv: list[str] | None = None) -> int:
    args = eval_parser().parse_args(argv)
    if args.temperature <= 0 and args.num_generations > 1:
        print(
            f"textrl-eval: --temperature {args.temperature} (greedy) gives the same completion every time, so "
            f"--num-generations {args.num_generations} would repeat it. Fix: sample (--temperature > 0) or use "
            "--num-generations 1.",
            file=sys.stderr,
        )
        return 2
    try:
        if args.output is not None:
            check_output(args)
        elif args.overwrite:
            raise ConfigError([Problem("--overwrite", "is given without --output. Fix: add --output FILE.jsonl.")])
        from ..rewards import as_reward
        from ..rewards.checks import check_signature
        from ..rewards.refs import resolve_ref

        rewards = {ref: as_reward(resolve_ref(ref, Path.cwd(), "--reward", caller="eval")) for ref in args.reward}
        say(f"reading prompts from {args.dataset}")
        data = _load_prompts(args)
        for fn in rewards.values():  # a parameter nothing fills is named before the model loads
            check_signature(fn, data.column_names)
        device = _device()
        say(f"loading the model {args.model} (onto {device}) ...")
        started = time.perf_counter()
        from transformers import set_seed

        from ..models import load_model

        set_seed(args.seed)
        model, tokenizer, _ = load_model(args.model, load_ref=False, task="causal-lm", gguf_file=args.gguf_file)
        model.to(device)
        say(f"model loaded in {time.perf_counter() - started:.1f} s")
        prompts = list(data["prompt"])
        batches = math.ceil(len(prompts) / args.batch_size)
        say(
            f"generating {len(prompts) * args.num_generations} completions ({len(prompts)} prompts x "
            f"{args.num_generations}) in {batches} batch(es) of up to {args.batch_size} prompts, at most "
            f"{args.max_new_tokens} new tokens each"
        )
        started = time.perf_counter()
        texts = generate(model, tokenizer, prompts, args)
        seconds = time.perf_counter() - started
        # rewards see completions as TRL passes them: assistant messages when the prompts are conversational
        completions = [as_completion(t, prompts[0]) for t in texts]
        repeated = [p for p in prompts for _ in range(args.num_generations)]
        columns = {
            c: [v for v in data[c] for _ in range(args.num_generations)] for c in data.column_names if c != "prompt"
        }
        say(f"scoring with {len(rewards)} reward(s)")
        scores = {ref: fn(prompts=repeated, completions=completions, **columns) for ref, fn in rewards.items()}
    except (ConfigError, DataError, RewardError) as exc:
        print(f"textrl-eval: {exc}", file=sys.stderr)
        return 2
    print(
        f"{len(texts)} completions ({len(prompts)} prompts x {args.num_generations}) generated in {seconds:.3f} s: "
        f"{len(texts) / seconds:.1f} completions/s at batch size {args.batch_size}"
    )
    print(summarize(scores))
    if args.output:
        rows = [
            {"prompt": prompt, "completion": completion, "rewards": {r: s[i] for r, s in scores.items()}}
            for i, (prompt, completion) in enumerate(zip(repeated, completions, strict=True))
        ]
        write_rows(args.output, rows)
        print(f"wrote {len(completions)} rows to {args.output}")
    return 0
