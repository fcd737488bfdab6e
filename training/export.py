"""Checkpoints and policy files.

A checkpoint is SB3's ``.zip`` plus a ``.json`` beside it (config, versions, timesteps); it is
loaded without unpickling anything from the file (``training.sb3_safe``). A policy file is
data only: ``policy.safetensors`` (``arboretum_env.agents.policy_file``: the weights of a network
named in its JSON description), which ``PolicyAgent`` plays from.

For deployment elsewhere, ``arboretum export --format torchscript`` also writes a TorchScript
file: ``forward(obs float32 [B, D], mask int8 [B, 489]) -> (action [B], masked logits [B, 489])``.
``--format onnx`` writes the same model as ONNX (:func:`export_onnx`; inputs ``observation``
float32 [B, D] and ``action_mask`` int8 [B, 489], outputs ``action`` int64 [B] and
``masked_logits`` float32 [B, 489]; needs the ``[onnx]`` extra). ``D`` is the network's full
input: the observation, followed by the hints for a policy that reads them (the shipped agent):
compute those with ``agents.hints.with_hints`` before calling the model; for a ``plane_net``
with ``card_gains``, the observation followed by its card gains
(``arboretum_env.batch.card_gains.with_card_gains``).
This project never reads one back, except to convert an old TorchScript policy file once, when its
owner says they trust it (``--trust-torchscript``; :func:`convert_torchscript`).
"""

from __future__ import annotations

import contextlib
import io
import json
import warnings
from pathlib import Path

import torch
from torch import nn

from arboretum_env.actions import NUM_ACTIONS
from arboretum_env.agents.networks import input_size
from arboretum_env.agents.policy_file import (SUFFIX, PolicyFileError, load_policy_file, program_kind,
                                              program_problem, save_policy_file)
from arboretum_env.fileio import OutputPathError, atomic_write_bytes, atomic_write_text, check_writable
from arboretum_env.versions import check_versions, current_versions
from training.config import config_from_dict
from training.network import sb3_network_state
from training.sb3_safe import CheckpointError, safe_load
from training.selfplay_export import export_selfplay_checkpoint, selfplay_checkpoint
from training.tournament_files import input_paths, refuse_output_over_inputs

__all__ = ["CheckpointError", "export_policy", "export_torchscript", "export_onnx", "convert_torchscript", "save_checkpoint",
           "find_checkpoint", "read_checkpoint_meta", "load_checkpoint", "export_command"]


def export_policy(model, path: str | Path, metadata: dict) -> Path:
    """Write ``model``'s policy (an SB3 MaskablePPO of this project) as a data-only policy file;
    ``metadata['hints']`` (bool) and ``metadata['advisor']`` say what it reads."""
    name, kwargs, state = sb3_network_state(model.policy, bool(metadata.get("hints")))
    return save_policy_file(path, name, kwargs, state, metadata)


class _MaskedNetwork(nn.Module):
    """A network of ``agents.networks`` with the mask applied: the TorchScript export."""

    def __init__(self, network: nn.Module):
        super().__init__()
        self.network = network

    def forward(self, obs: torch.Tensor, mask: torch.Tensor):
        logits, _ = self.network(obs)
        masked = logits.masked_fill(mask == 0, -1e9)
        return masked.argmax(dim=1), masked


def _example_inputs(network: nn.Module, meta: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of two inputs to trace ``network`` with: ``D`` wide (the observation, then the
    hints or the card gains it reads; see the module docstring) and the mask."""
    width = input_size(meta.get("hints") is not None) + getattr(network, "extra_inputs", 0)
    return torch.zeros(2, width), torch.ones(2, NUM_ACTIONS, dtype=torch.int8)


def export_torchscript(policy_path: str | Path, out: str | Path) -> Path:
    """A TorchScript file of a policy file, for deployment outside this project."""
    network, meta = load_policy_file(policy_path)
    obs, mask = _example_inputs(network, meta)
    with torch.no_grad(), warnings.catch_warnings():  # TorchScript: deprecated, still supported
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.trace(_MaskedNetwork(network).eval(), (obs, mask))
        buffer = io.BytesIO()
        torch.jit.save(scripted, buffer, _extra_files={"metadata.json": json.dumps(meta)})
    atomic_write_bytes(out, buffer.getvalue())
    return Path(out)


ONNX_OPSET = 17


def export_onnx(policy_path: str | Path, out: str | Path) -> Path:
    """An ONNX file of a policy file, the mask applied inside: inputs ``observation`` float32
    [B, D] (``D``: the observation, plus the hints if the policy reads them; see the module
    docstring) and ``action_mask`` int8 [B, 489]; outputs ``action`` int64 [B] (the legal argmax)
    and ``masked_logits`` float32 [B, 489] (illegal entries -1e9). The policy's description is
    stored in the model's metadata (key ``arboretum``). Needs ``pip install arboretum-rl[onnx]``."""
    try:
        import onnx
    except ImportError:
        raise PolicyFileError("--format onnx needs the onnx package: pip install 'arboretum-rl[onnx]'") from None
    network, meta = load_policy_file(policy_path)
    obs, mask = _example_inputs(network, meta)
    buffer = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript-based exporter: deprecated, still supported
        torch.onnx.export(_MaskedNetwork(network).eval(), (obs, mask), buffer, dynamo=False,
                          input_names=["observation", "action_mask"], output_names=["action", "masked_logits"],
                          dynamic_axes={"observation": {0: "batch"}, "action_mask": {0: "batch"},
                                        "action": {0: "batch"}, "masked_logits": {0: "batch"}},
                          opset_version=ONNX_OPSET)
    model = onnx.load_from_string(buffer.getvalue())
    entry = model.metadata_props.add()
    entry.key, entry.value = "arboretum", json.dumps(meta)
    onnx.checker.check_model(model)
    atomic_write_bytes(out, model.SerializeToString())
    return Path(out)


def _old_network(state: dict, hints: bool) -> tuple[str, dict, dict]:
    """The network of an old TorchScript policy file (``_MaskedPolicy`` of the SB3 policy:
    ``features``, ``actor``, ``action_net``; no value head, which is left at zero)."""
    if "features.conv.0.weight" in state:
        kwargs = {"channels": int(state["features.conv.0.weight"].shape[0]),
                  "hidden": int(state["features.join.0.weight"].shape[0]), "hints": hints}
        out = {k: v for k, v in state.items() if k.startswith(("features.", "action_net."))}
        out = {k: v for k, v in out.items() if not k.endswith(("plane_idx", "other_idx"))}
        name = "cnn"
    elif "actor.0.weight" in state:
        kwargs = {"hidden": int(state["actor.0.weight"].shape[0]), "hints": hints}
        out = {"policy_net." + k[len("actor."):]: v for k, v in state.items() if k.startswith("actor.")}
        out.update({k: v for k, v in state.items() if k.startswith("action_net.")})
        name = "mlp"
    else:
        raise PolicyFileError("not a policy file of this project (unknown TorchScript layout)")
    from arboretum_env.agents.networks import build_network

    fresh = build_network(name, kwargs).state_dict()
    for key, value in fresh.items():
        out.setdefault(key, torch.zeros_like(value))  # the value head: not in the old files
    return name, kwargs, out


def convert_torchscript(old: str | Path, out: str | Path, *, trust: bool = False) -> Path:
    """Convert an old TorchScript policy file (``policy.pt``) into a data-only policy file.
    Loading TorchScript runs the program inside the file: only with ``trust=True``, for files
    from a source you trust (this project's own older releases)."""
    old = Path(old)
    kind = program_kind(old)
    if kind not in ("torchscript", "unknown"):  # a self-play checkpoint without its .json, a pickle
        raise PolicyFileError(program_problem(old, kind))
    if not trust:
        raise PolicyFileError(f"{old}: converting a TorchScript file runs the code inside it; "
                              f"add --trust-torchscript if you trust its author")
    extra = {"metadata.json": ""}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            module = torch.jit.load(str(old), map_location="cpu", _extra_files=extra)  # trusted by the caller
        meta = json.loads(extra["metadata.json"])
    except Exception as exc:
        raise PolicyFileError(f"{old}: not a TorchScript policy file ({type(exc).__name__})") from None
    check_versions(meta.get("versions"), str(old))
    hints = bool(meta.get("hints"))
    name, kwargs, state = _old_network(dict(module.state_dict()), hints)
    keep = {k: v for k, v in meta.items() if k not in ("versions", "format")}
    keep.update(advisor=meta.get("advisor", "greedy"), value_head="none (converted from TorchScript: zeros)",
                converted_from=f"{old.name} (TorchScript, trusted once)")
    return save_policy_file(out, name, kwargs, state, keep)


def checkpoint_meta_path(zip_path: Path) -> Path:
    return zip_path.with_suffix(".json")


class _KeptBuffer(io.BytesIO):
    """SB3 closes the file it saves to; this one keeps its bytes readable."""

    def close(self) -> None:
        pass


def save_checkpoint(model, folder: Path, timesteps: int, config: dict, extra: dict | None = None) -> Path:
    """The ``.zip`` and then its ``.json``, each written whole under its real name or not at all:
    a checkpoint with its ``.json`` is complete."""
    folder.mkdir(parents=True, exist_ok=True)
    zip_path = folder / f"step_{timesteps:09d}.zip"
    buffer = _KeptBuffer()
    model.save(buffer)
    atomic_write_bytes(zip_path, buffer.getvalue())
    meta = {"timesteps": timesteps, "config": config, "versions": current_versions(), **(extra or {})}
    atomic_write_text(checkpoint_meta_path(zip_path), json.dumps(meta, indent=2))
    return zip_path


def _step_number(path: Path) -> int:
    digits = path.stem.rpartition("_")[2]
    return int(digits) if digits.isdigit() else -1


def find_checkpoint(path: str | Path) -> Path:
    """A checkpoint ``.zip``, or the newest one inside a run folder (or its ``checkpoints/``)."""
    path = Path(path)
    if path.is_dir():
        folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
        zips = sorted(folder.glob("step_*.zip"), key=_step_number)  # by number: step_10000 after step_2000
        if not zips:
            raise CheckpointError(f"{path}: no checkpoint (step_*.zip) in this folder")
        return zips[-1]
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint")
    return path


def read_checkpoint_meta(zip_path: Path) -> dict:
    meta_path = checkpoint_meta_path(zip_path)
    try:
        meta = json.loads(meta_path.read_text())
    except OSError:
        raise CheckpointError(f"{zip_path}: its metadata {meta_path.name} is missing") from None
    except (ValueError, RecursionError):
        raise CheckpointError(f"{meta_path}: corrupt metadata (not JSON)") from None
    if not isinstance(meta, dict) or type(meta.get("timesteps")) is not int or meta["timesteps"] < 0:
        raise CheckpointError(f"{meta_path}: corrupt metadata (no timesteps)")
    check_versions(meta.get("versions"), str(zip_path))
    return meta


def checkpoint_config(zip_path: Path, meta: dict):
    """The training config stored with a checkpoint (checked as any config)."""
    if not isinstance(meta.get("config"), dict):
        raise CheckpointError(f"{checkpoint_meta_path(zip_path)}: no training config (key 'config')")
    return config_from_dict(meta["config"], f"{checkpoint_meta_path(zip_path)} (config)")


def load_checkpoint(path: str | Path, env=None, custom_objects: dict | None = None):
    """Load a MaskablePPO checkpoint after checking its metadata, without unpickling anything
    from it (``training.sb3_safe``); one-line errors. ``custom_objects``: plain values to
    replace (``tensorboard_log``)."""
    zip_path = find_checkpoint(path)
    meta = read_checkpoint_meta(zip_path)
    model = safe_load(zip_path, checkpoint_config(zip_path, meta), env=env, extra=custom_objects)
    return model, meta, zip_path


FORMATS = ("safetensors", "torchscript", "onnx")


@contextlib.contextmanager
def _writing(target: Path):
    """A full disk, or a folder gone since ``check_writable``: one line; the atomic writers leave
    nothing behind and an old file at ``target`` stays as it was."""
    try:
        yield
    except OSError as exc:
        raise OutputPathError(f"-o {target}: cannot write: {exc.strerror or exc}") from None


def default_output(checkpoint: Path, suffix: str) -> Path:
    """Where ``export`` writes without ``-o``: ``<stem>_policy<suffix>`` beside the checkpoint, or
    for a checkpoint in a run's ``checkpoints/``, in the run folder (``RUN/step_N_policy.pt``):
    never among the run's checkpoints, where a ``step_*`` file would be taken for one."""
    folder = checkpoint.parent.parent if checkpoint.parent.name == "checkpoints" else checkpoint.parent
    return folder / f"{checkpoint.stem}_policy{suffix}"


def _target(out: str | None, default: Path, source: str, checkpoint: Path | None = None) -> Path:
    """The output path, checked before anything is loaded: writable, and none of the input's
    files (the source, a checkpoint's ``.json``, a run's ``checkpoints/`` and ``pool/``)."""
    target = Path(out) if out else default
    inputs = input_paths(source) + (input_paths(str(checkpoint)) if checkpoint is not None else [])
    refuse_output_over_inputs("-o", target, inputs)
    return check_writable(target, "-o")


def export_command(source: str, out: str | None, fmt: str = "safetensors",
                   trust_torchscript: bool = False) -> str:
    """``arboretum export SOURCE [-o FILE] [--format safetensors|torchscript|onnx]
    [--trust-torchscript]``: a checkpoint (or run folder) to a policy file; a policy file (or a
    checkpoint) to TorchScript or ONNX; an old TorchScript policy file (trusted) to a policy file.
    The output path is checked before anything is loaded (``_target``). Returns the text to print."""
    if fmt not in FORMATS:
        raise PolicyFileError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    deploy = {"torchscript": (export_torchscript, ".pt"), "onnx": (export_onnx, ".onnx")}.get(fmt)
    suffix = SUFFIX if deploy is None else deploy[1]
    src = Path(source)
    selfplay = selfplay_checkpoint(src)  # None for SB3 checkpoints and folders, policy files
    if selfplay is not None:  # a self-play checkpoint (or run folder): its learner's network
        target = _target(out, default_output(selfplay, suffix), source, selfplay)
        return _write_policy(target, deploy, lambda path: export_selfplay_checkpoint(selfplay, path))
    if src.is_file() and src.suffix == ".pt":
        target = _target(out, src.with_suffix(SUFFIX), source)
        with _writing(target):
            return f"wrote {convert_torchscript(src, target, trust=trust_torchscript)}"
    if src.is_file() and src.suffix == SUFFIX:
        if deploy is None:
            kind = program_kind(src)  # "unknown" for a safetensors file
            if kind != "unknown":  # e.g. a TorchScript program named .safetensors
                raise PolicyFileError(program_problem(src, kind))
            raise PolicyFileError(f"{src}: already a policy file (use --format torchscript or onnx to deploy it)")
        target = _target(out, src.with_suffix(deploy[1]), source)
        with _writing(target):
            return f"wrote {deploy[0](src, target)}"
    zip_path = find_checkpoint(source)
    target = _target(out, default_output(zip_path, suffix), source, zip_path)
    model, meta, zip_path = load_checkpoint(zip_path)
    config = checkpoint_config(zip_path, meta)
    return _write_policy(target, deploy, lambda path: export_policy(
        model, path, {"timesteps": meta.get("timesteps"), "trained_from": str(zip_path),
                      "num_players": config.num_players, "hints": config.hints, "advisor": config.teacher}))


def _write_policy(target: Path, deploy, write) -> str:
    """``write(path)`` a policy file at ``target``, or (``deploy``: TorchScript or ONNX) at a
    temporary name, deployed to ``target`` and removed."""
    policy_path = target if deploy is None else target.with_name(target.name + ".tmp" + SUFFIX)
    with _writing(target):
        try:
            write(policy_path)
            if deploy is not None:
                deploy[0](policy_path, target)
        finally:
            if deploy is not None:
                policy_path.unlink(missing_ok=True)
    return f"wrote {target}"
