#!/usr/bin/env python3
"""Print (as Markdown) the Live message types of the installed Python SDK
(`google-genai`, google/genai/types.py) with their wire names.

run.sh writes the output to SDK-TYPES.md.  How the wire names are found:
  * every types.py model is a pydantic model whose alias is the lowerCamelCase
    wire name (alias_generator=to_camel);
  * for server messages on the Google AI API the SDK renames a few fields while
    decoding (google/genai/_live_converters.py, functions `_X_from_mldev`);
    those renames are read from the converter source and override the alias;
  * where each LiveConnectConfig field lands inside the `setup` message is read
    from `_LiveConnectConfig_to_mldev` in the same file.
"""

from __future__ import annotations

import enum
import importlib.metadata
import inspect
import re
import typing

import pydantic
from google.genai import _live_converters, types

SERVER_MODELS = [
    "LiveServerMessage", "LiveServerSetupComplete", "VoiceConsentSignature",
    "LiveServerContent", "Content", "Part", "Blob", "FunctionCall", "PartialArg",
    "Transcription", "WordInfo", "UsageMetadata", "ModalityTokenCount",
    "LiveServerToolCall", "LiveServerToolCallCancellation", "LiveServerGoAway",
    "LiveServerSessionResumptionUpdate", "VoiceActivityDetectionSignal", "VoiceActivity",
]
SERVER_ENUMS = [
    "TurnCompleteReason", "InteractionStatus", "VoiceActivityType", "VadSignalType",
    "MediaModality", "TrafficType", "ServiceTier",
]
CLIENT_MODELS = [
    "LiveClientMessage", "LiveClientSetup", "LiveClientContent", "LiveClientRealtimeInput",
    "ActivityStart", "ActivityEnd", "LiveClientToolResponse", "FunctionResponse",
    "LiveClientContextUpdate", "LiveClientContextUpdateTools", "RealtimeInputConfig",
    "AutomaticActivityDetection", "SessionResumptionConfig", "ContextWindowCompressionConfig",
    "SlidingWindow", "ProactivityConfig", "AudioTranscriptionConfig", "HistoryConfig",
]
CLIENT_ENUMS = [
    "Modality", "StartSensitivity", "EndSensitivity", "ActivityHandling", "TurnCoverage",
    "FunctionResponseScheduling", "Behavior", "MediaResolution",
]


def wire_renames() -> dict[str, dict[str, str]]:
    """{ClassName: {python_field: wire_name}} from the `_X_from_mldev` converters."""
    out: dict[str, dict[str, str]] = {}
    for name, fn in inspect.getmembers(_live_converters, inspect.isfunction):
        m = re.fullmatch(r"_(\w+)_from_mldev", name)
        if not m:
            continue
        src = inspect.getsource(fn)
        pairs = re.findall(
            r"getv\(from_object, \['(\w+)'\]\)\) is not None:\s*setv\(\s*to_object,\s*\['(\w+)'\]"
            r"|getv\(from_object, \['(\w+)'\]\) is not None:\s*setv\(\s*to_object,\s*\['(\w+)'\]",
            src,
        )
        for p in pairs:
            wire, py = (p[0], p[1]) if p[0] else (p[2], p[3])
            if wire != pydantic.alias_generators.to_camel(py):
                out.setdefault(m.group(1), {})[py] = wire
    return out


def setup_placement() -> list[tuple[str, str]]:
    """[(LiveConnectConfig field, where it goes in the setup message)]."""
    src = inspect.getsource(_live_converters._LiveConnectConfig_to_mldev)
    rows = []
    for field, body in re.findall(
        r"if getv\(from_object, \['(\w+)'\]\) is not None:\n(.*?)(?=\n  if |\n  return)",
        src, re.S,
    ):
        if "raise ValueError" in body:
            rows.append((field, "rejected on the Google AI API (Vertex only)"))
            continue
        m = re.search(r"\[\s*((?:'\w+',?\s*)+)\]", body)
        path = ".".join(re.findall(r"'(\w+)'", m.group(1))) if m else "?"
        rows.append((field, path))
    return rows


def type_name(ann) -> str:
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Annotated:
        # ToolListUnion is Annotated[list, WrapValidator(_validate_tool_list)].
        if args[0] is list and "_validate_tool_list" in repr(args[1:]):
            return "list[Tool]"
        return type_name(args[0])
    if origin is typing.Union:
        args = [a for a in args if a is not type(None)]
        return " | ".join(type_name(a) for a in args)
    if origin in (list, typing.List):
        return f"list[{type_name(args[0])}]"
    if origin in (dict, typing.Dict):
        return "object (map)"
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if inspect.isclass(ann):
        if issubclass(ann, enum.Enum):
            return f"{ann.__name__} (enum)"
        if ann is bytes:
            return "bytes (base64 string)"
        return ann.__name__
    return str(ann).replace("typing.", "")


def first_sentence(text: str | None) -> str:
    """The first real sentence of a description, with its Optional./Required./
    Output only. marker kept as a short prefix."""
    if not text:
        return ""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z`])", " ".join(text.split()))
    tags = []
    while sentences and sentences[0] in ("Optional.", "Required.", "Output only."):
        tags.append(sentences.pop(0).rstrip(".").lower())
    text = sentences[0] if sentences else ""
    if len(text) > 120:
        text = text[:117] + "..."
    return (f"({', '.join(tags)}) " if tags else "") + text


def model_table(name: str, renames: dict[str, dict[str, str]]) -> list[str]:
    cls = getattr(types, name, None)
    if cls is None:
        return [f"### {name}", "", "_not in this SDK version_", ""]
    doc = first_sentence(cls.__doc__)
    lines = [f"### {name}", ""]
    if doc:
        lines += [doc, ""]
    if not cls.model_fields:
        return lines + ["_no fields (an empty object `{}` on the wire)_", ""]
    lines += ["| python field | wire name | type | meaning |", "|---|---|---|---|"]
    for field, info in cls.model_fields.items():
        wire = renames.get(name, {}).get(field, info.alias or field)
        mark = " **(renamed by SDK)**" if field in renames.get(name, {}) else ""
        desc = first_sentence(info.description).replace("|", "\\|")
        lines.append(f"| `{field}` | `{wire}`{mark} | {type_name(info.annotation)} | {desc} |")
    return lines + [""]


def enum_line(name: str) -> str:
    cls = getattr(types, name, None)
    if cls is None:
        return f"- `{name}`: _not in this SDK version_"
    return f"- `{name}`: " + ", ".join(f"`{m.value}`" for m in cls)


def main() -> None:
    version = importlib.metadata.version("google-genai")
    renames = wire_renames()
    out = [
        "# Live API types of the official Python SDK",
        "",
        f"Generated by `sdk_types.py` (run by `run.sh`) from `google-genai` {version}: "
        "`google/genai/types.py` and `google/genai/_live_converters.py`. Do not edit by hand.",
        "",
        "Wire names are the pydantic aliases (lowerCamelCase), except where the SDK's "
        "Google AI decoder (`_X_from_mldev` in `_live_converters.py`) renames a field; "
        "those are marked **(renamed by SDK)** and show the name actually on the wire. "
        "Every field is optional. int64 fields may arrive as JSON strings (protobuf JSON); "
        "Duration fields (`timeLeft`, offsets) are strings like `\"9.5s\"`; bytes are base64 "
        "strings. For forward compatibility the SDK silently drops fields it does not know, "
        "at every level (`_common._remove_extra_fields` before validation; the decoder "
        "also copies only the known top-level keys): an unknown Part kind becomes an "
        "empty Part.",
        "",
        "Renames found in the decoder: "
        + (", ".join(f"`{c}.{p}` <- wire `{w}`" for c, m in sorted(renames.items())
                     for p, w in sorted(m.items())) or "none"),
        "",
        "## Server -> client",
        "",
    ]
    for name in SERVER_MODELS:
        out += model_table(name, renames)
    out += ["### Server enums", ""] + [enum_line(n) for n in SERVER_ENUMS] + [""]
    out += [
        "## Client -> server",
        "",
        "Wire names here are the aliases; the Python SDK itself writes some of them in "
        "snake_case (see the fixtures' manifest.json, `snake_case_key_paths`). A reader "
        "must accept both spellings.",
        "",
        "### Where LiveConnectConfig fields go in `setup` (Google AI)",
        "",
        "| LiveConnectConfig field | setup path |",
        "|---|---|",
    ]
    out += [f"| `{f}` | `{p}` |" if "." in p or p.isidentifier() else f"| `{f}` | {p} |"
            for f, p in setup_placement()]
    out += [""]
    for name in CLIENT_MODELS:
        out += model_table(name, {})
    out += ["### Client enums", ""] + [enum_line(n) for n in CLIENT_ENUMS] + [""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
