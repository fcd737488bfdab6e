"""Policy files that hold only data: ``policy.safetensors``.

The weights are a safetensors file (named tensors, nothing executable); its header metadata
holds one JSON description under the key ``"arboretum"``::

    {"format": "arboretum-policy/2",
     "network": "cnn", "network_kwargs": {"channels": 16, "hidden": 256, "hints": true},
     "versions": {... current_versions() ...},
     "hints": null | {"layout": 1, "size": 653, "scale": 20.0, "sections": [...],
                      "advisor": "tempo", "advisor_params": {...}},
     "checksum": "sha256:<hex of the tensor data>",
     ... what the writer adds: "timesteps", "trained_from", "num_players", "run", ...}

Loading builds the network named there from this project's code (``networks.NETWORKS``) and
copies the tensors into it; nothing from the file is ever run. Every way a file can be wrong
(missing, not safetensors, a TorchScript or pickle file, no or bad description, other versions,
other hints, damaged weights, weights that do not fit the network) is one ``UserError`` line.

Layer: agents (torch and safetensors; no SB3, nothing from ``training``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from ..errors import UserError
from ..fileio import atomic_write_bytes
from ..versions import check_versions, current_versions
from .hints import check_hint_spec, hint_spec
from .networks import NetworkSpecError, build_network, network_reads_hints

FORMAT = "arboretum-policy/2"
SUFFIX = ".safetensors"
META_KEY = "arboretum"
RESERVED = ("format", "network", "network_kwargs", "versions", "checksum")


class PolicyFileError(UserError):
    """A missing, corrupt, unsafe or mismatched policy file."""


def tensor_checksum(tensors: dict) -> str:
    """sha256 over the tensors in name order: name, dtype, shape and raw bytes of each."""
    digest = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        digest.update(json.dumps([name, str(t.dtype), list(t.shape)]).encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return "sha256:" + digest.hexdigest()


def _hints_entry(metadata: dict):
    """``metadata['hints']`` as stored: None, or the full hint description (from a bool plus
    ``metadata['advisor']``, or a description already, which must be this version's)."""
    hints = metadata.get("hints")
    if not hints:
        return None
    if isinstance(hints, dict):
        return hint_spec(check_hint_spec(hints, "save_policy_file: metadata['hints']"))
    return hint_spec(metadata.get("advisor") or "greedy")


def save_policy_file(path, network: str, network_kwargs: dict, state_dict: dict, metadata: dict) -> Path:
    """Write ``state_dict`` (of ``build_network(network, network_kwargs)``) and its description
    as a policy file, atomically. ``metadata``: anything JSON (``hints``: a bool with
    ``advisor``, or a hint description; ``timesteps``, ``trained_from``, ...); the reserved
    keys (format, network, versions, checksum) are set here."""
    from safetensors.torch import save

    tensors = {k: v.detach().cpu().contiguous().clone() for k, v in state_dict.items()}
    net = build_network(network, network_kwargs)
    net.load_state_dict(tensors, strict=True)  # a file that would not load is never written
    hints = _hints_entry(metadata)
    if (hints is not None) != network_reads_hints(network_kwargs):
        raise ValueError(f"save_policy_file: metadata hints={hints is not None} but the network "
                         f"arguments say hints={network_reads_hints(network_kwargs)}")
    description = {k: v for k, v in metadata.items() if k not in RESERVED and k != "advisor"}
    description.update(format=FORMAT, network=network, network_kwargs=dict(network_kwargs),
                       versions=current_versions(), hints=hints, checksum=tensor_checksum(tensors))
    data = save(tensors, metadata={META_KEY: json.dumps(description, sort_keys=True)})
    path = Path(path)
    atomic_write_bytes(path, data)
    return path


def program_kind(path: Path) -> str:
    """What a zip or pickle file is, found without running anything in it: ``"torchscript"`` (a
    zip with ``code/``), ``"checkpoint"`` (a self-play checkpoint: ``torch.load(weights_only=True)``
    gives a dict with ``net``), ``"torch.save"`` (other plain tensor data), ``"pickle"`` (objects
    the weights-only loader refuses), ``"zip"`` (another zip) or ``"unknown"`` (unreadable)."""
    import zipfile

    path = Path(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
        if head[:1] != b"\x80" and head != b"PK\x03\x04":
            return "unknown"
        if head == b"PK\x03\x04":
            with zipfile.ZipFile(path) as archive:
                inner = [name.partition("/")[2] for name in archive.namelist()]
            if any(name.startswith("code/") or name == "constants.pkl" for name in inner):
                return "torchscript"
            if "data.pkl" not in inner:
                return "zip"
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError):
        return "unknown"
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)  # runs nothing from the file
    except Exception:  # objects the weights-only unpickler refuses, or not torch data at all
        return "pickle"
    return "checkpoint" if isinstance(data, dict) and "net" in data else "torch.save"


def program_problem(path: Path, kind: str) -> str:
    """The one-line refusal for a file of ``program_kind`` ``kind`` given as a policy file."""
    if kind == "checkpoint":
        meta = path.with_suffix(".json")
        state = "is damaged or not a self-play checkpoint's" if meta.exists() else "is missing"
        return (f"{path}: not a policy file: it looks like a self-play checkpoint whose {meta.name} {state}; "
                f"copy step_N.json from the run's checkpoints/ beside it, or give the run folder")
    if kind == "torchscript" and path.suffix == SUFFIX:
        return (f"{path}: not a policy file: a TorchScript program named {SUFFIX} (a TorchScript or pickle "
                f"file can run code, so it is never loaded); if you trust its author, rename it to .pt "
                f"and convert it once: arboretum export NAME.pt --trust-torchscript")
    if kind in ("torch.save", "pickle"):
        what = "a torch.save file (pickled tensors)" if kind == "torch.save" else "a pickle file"
        return (f"{path}: not a policy file: {what}, which nothing here loads as a policy "
                f"(a TorchScript or pickle file can run code)")
    if kind == "zip":
        return f"{path}: not a policy file: a zip archive, neither TorchScript nor torch.save data"
    return (f"{path}: a TorchScript or pickle file (it can run code), not a data-only policy file; "
            f"if you trust its author, convert it once: arboretum export {path} --trust-torchscript")


def _refuse_program(path: Path, head: bytes) -> None:
    """A zip (TorchScript, ``torch.save``) or a pickle is named as such (``program_problem``). A
    safetensors file starts with its header's length (8 bytes, little-endian) and then ``{``:
    never taken for either."""
    if head[8:9] == b"{":
        return
    if head.startswith(b"PK\x03\x04") or head[:1] == b"\x80":
        raise PolicyFileError(program_problem(path, program_kind(path)))


def read_policy_file(path) -> tuple[dict, dict]:
    """``(tensors, description)`` of a policy file, the checksum and versions checked."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise PolicyFileError(f"{path}: no such policy file")
    with path.open("rb") as fh:
        _refuse_program(path, fh.read(9))
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            raw = (f.metadata() or {}).get(META_KEY)
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises SafetensorError and others on damaged files
        raise PolicyFileError(f"{path}: not a policy file ({type(exc).__name__}: {exc})".splitlines()[0]) from None
    if raw is None:
        raise PolicyFileError(f"{path}: a safetensors file without an arboretum policy description")
    try:
        description = json.loads(raw)
    except json.JSONDecodeError:
        raise PolicyFileError(f"{path}: its policy description is not valid JSON") from None
    if not isinstance(description, dict) or description.get("format") != FORMAT:
        found = description.get("format") if isinstance(description, dict) else None
        raise PolicyFileError(f"{path}: unknown policy file format {found!r} (expected {FORMAT!r})")
    check_versions(description.get("versions"), str(path))
    stored, actual = description.get("checksum"), tensor_checksum(tensors)
    if stored != actual:
        raise PolicyFileError(f"{path}: damaged weights: the checksum does not match "
                              f"(stored {str(stored)[:19]}..., computed {actual[:19]}...)")
    return tensors, description


def load_policy_file(path) -> tuple[torch.nn.Module, dict]:
    """``(network in eval mode, description)``: the network named in the file, built from this
    project's code, with the file's weights. One-line ``UserError`` for any bad file."""
    tensors, description = read_policy_file(path)
    name, kwargs = description.get("network"), description.get("network_kwargs")
    hints = description.get("hints")
    if hints is not None:
        check_hint_spec(hints, str(path))
    if not isinstance(kwargs, dict) or (hints is not None) != network_reads_hints(kwargs):
        raise PolicyFileError(f"{path}: its network arguments {kwargs!r} do not match its hints")
    try:
        net = build_network(name, kwargs)
    except NetworkSpecError as exc:
        raise PolicyFileError(f"{path}: {exc}") from None
    try:
        net.load_state_dict(tensors, strict=True)
    except RuntimeError as exc:
        detail = " ".join(str(exc).split())[:200]
        raise PolicyFileError(f"{path}: the weights do not fit network {name!r} {kwargs}: {detail}") from None
    return net.eval(), description
