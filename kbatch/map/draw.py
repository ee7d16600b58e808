"""Drawing a map's model (:mod:`kbatch.map.gather`): Vega-Lite charts, as one HTML page or an SVG picture.

Vega-Lite (through vl-convert-python, the ``map`` extra) draws the charts: in the page, Vega renders them
on a canvas with zoom (drag, wheel) and tooltips, from a script bundled into the page itself (no network
when it is viewed); for ``--format svg`` vl-convert renders the same charts to SVG without a browser.

Per partition (or lone segment) three charts:

* the byte map: each segment a row, its file positions left to right; each batch (or bin of bytes) a block
  coloured by the choice made (codec, magic, producer, kind, damage); damaged ranges and the preallocated zero
  tail over them, a tick where each begins (a resync point where it ends); the ``.index`` and
  ``.timeindex`` entries as ticks on rows of their own, at the positions they point at;
* the timeline: each batch's (or bin's) last offset against its largest timestamp, coloured by segment, over
  the leader epochs' bands (from the batches) with the ``leader-epoch-checkpoint`` entries as dashed rules,
  segment starts as rules, and gaps and overlaps between segments as bands;
* the transactions: a span per transaction, a lane per producer, from its first offset to its marker,
  coloured by outcome.

Above them, with more than one partition, the log directory: each partition's size, segments, time range
and damage.
"""

from __future__ import annotations

import functools
import html
import json
from typing import Any

from kbatch.output.values import iso_timestamp
from kbatch.output.visible import json_name, visible
from kbatch.map.gather import COLOR_CHOICES, LANE_STATES

# The specs are Vega-Lite 6; the page and the picture use the newest 6.x vl-convert carries (the same version
# as the schema, or Vega-Lite says so on the console).
VEGA_LITE_MAJOR = 6
VEGA_LITE_SCHEMA = f"https://vega.github.io/schema/vega-lite/v{VEGA_LITE_MAJOR}.json"
WIDTH = 640         # a chart's width in the SVG picture, and in the page until its script fits it to the window
ROW_HEIGHT = 22

# Fixed colours where the values are known, so that a colour means the same thing on every map.
DAMAGED, INTACT, ZERO = "#d62728", "#9ecae1", "#c7c7c7"
COLOUR_SCALES = {
    "codec": {"domain": ["none", "gzip", "snappy", "lz4", "zstd"],
              "range": ["#9ecae1", "#fdae6b", "#a1d99b", "#bcbddc", "#fdd0a2"]},
    "magic": {"domain": ["v0", "v1", "v2", "v3"], "range": ["#fdae6b", "#bcbddc", "#9ecae1", "#e377c2"]},
    "producer": {"scheme": "tableau20"},
    "kind": {"domain": ["plain", "idempotent", "transactional", "control"],
             "range": ["#9ecae1", "#a1d99b", "#fd8d3c", "#756bb1"]},
    "damage": {"domain": ["intact", "damaged"], "range": [INTACT, DAMAGED]},
}
CONFIG = {"view": {"stroke": None}, "legend": {"labelLimit": 240}}
# What the damaged ranges over the blocks are, in a legend of their own: there whatever the blocks are coloured by.
RANGES = {"domain": ["damaged bytes", "preallocated zeros"], "range": [DAMAGED, ZERO]}

# Offsets and file positions are whole numbers: no tick between two of them (a ".5" when zoomed in).
WHOLE_AXIS = {"tickMinStep": 1, "format": "d"}
# Timestamps are UTC on a 24-hour clock, each tick dated (the browser's zone and 12-hour clock would mislead),
# to the millisecond only where a tick falls between seconds.
UTC_AXIS = {"labelExpr": "utcFormat(datum.value, datum.value % 1000 ? '%Y-%m-%d %H:%M:%S.%L' : '%Y-%m-%d %H:%M:%S')"}

# kbatch map --replicas: a copy's lane (its offsets), the spans where its batches are not every copy's, and the
# marks on it.
LANE_EXTENT = "#d9d9d9"
LANE_HEIGHT = 2 * ROW_HEIGHT   # room for the three marks' ticks one above another
LANE_SPANS = {"domain": list(LANE_STATES), "range": ["#6baed6", "#fd8d3c", DAMAGED]}
LANE_MARKS = {"domain": ["diverges at", "truncated to", "high watermark"], "range": ["#e6550d", "black", "#31a354"]}

OUTCOMES = {"domain": ["COMMIT", "ABORT", "OPEN", "UNKNOWN"], "range": ["#31a354", "#d62728", "#3182bd", "#969696"]}

# The fields a batch block's tooltip shows: dump --format jsonl's names.
BATCH_TOOLTIP = ("pos", "size", "magic", "base_offset", "last_offset", "count", "codec", "crc_valid",
                 "partition_leader_epoch", "producer_id", "producer_epoch", "base_sequence", "is_transactional",
                 "is_control", "timestamp_type", "base_timestamp_iso", "max_timestamp_iso", "findings", "command")
BIN_TOOLTIP = ("pos", "end", "batches", "records", "damaged_batches", "first_offset", "last_offset",
               "min_timestamp_iso", "max_timestamp_iso", "mix", "command")


def _tooltip(fields) -> list[dict]:
    return [{"field": name, "type": "nominal"} for name in fields]


def _colour(choice: str) -> dict:
    return {"field": "colour", "type": "nominal", "title": choice, "scale": COLOUR_SCALES[choice]}


def _rows(partition: dict) -> list[str]:
    rows = []
    for segment in partition["segments"]:
        rows.append(segment["name"])
        if segment["index_entries"]:
            rows.append(f"{segment['name']} .index")
        if segment["timeindex_entries"]:
            rows.append(f"{segment['name']} .timeindex")
    return rows


def _block_data(partition: dict) -> tuple[list[dict], list[dict]]:
    """The blocks to draw: batches (their jsonl fields at the top, as the tooltip names them) and bins."""
    batches, bins = [], []
    for segment in partition["segments"]:
        row = segment["name"]
        for block in segment["blocks"]:
            cat = {choice: block[choice] for choice in COLOR_CHOICES}
            if "batch" in block:
                batches.append({**block["batch"], "row": row, "end": block["end"], "cat": cat,
                                "command": block["command"], "segment": segment["id"],
                                "findings": ", ".join(block["batch"]["findings"]) or "none"})
            else:
                mix = "; ".join(f"{choice}: " + ", ".join(block["mix"][choice]) for choice in ("codec", "kind"))
                bins.append({"row": row, "segment": segment["id"], "cat": cat, "pos": block["pos"],
                             "end": block["end"], "batches": block["batches"], "records": block["records"],
                             "damaged_batches": block["damaged_batches"], "first_offset": block["first_offset"],
                             "last_offset": block["last_offset"], "min_timestamp_iso": iso_timestamp(block["min_ts"]),
                             "max_timestamp_iso": iso_timestamp(block["max_ts"]), "mix": mix,
                             "command": block["command"]})
    return batches, bins


def byte_map(partition: dict, choice: str) -> dict:
    """The segments' bytes left to right, a row each (and a row for each index)."""
    pid = partition["id"]   # (a layer's name is its marks' name, unique in a spec of several partitions)
    batches, bins = _block_data(partition)
    regions = [{**region, "row": segment["name"], "segment": segment["id"], "resumed": region["end"]}
               for segment in partition["segments"] for region in segment["regions"]]
    ticks = [{**tick, "row": f"{segment['name']} .{kind}", "segment": segment["id"],
              **({"timestamp_iso": iso_timestamp(tick["timestamp"])} if "timestamp" in tick else {})}
             for segment in partition["segments"] for kind in ("index", "timeindex") for tick in segment[kind]]
    size = max((segment["size"] for segment in partition["segments"]), default=0) or 1
    x = {"field": "pos", "type": "quantitative", "title": "file position (bytes)",
         "scale": {"domain": [0, size], "nice": False, "zero": True}, "axis": WHOLE_AXIS}
    y = {"field": "row", "type": "nominal", "title": None, "sort": _rows(partition)}
    # An outline tells batches apart while each is a few pixels wide; narrower, it would hide them.
    most = max((len(segment["blocks"]) for segment in partition["segments"]), default=0)
    outline = {"stroke": "white", "strokeWidth": 0.3} if most <= WIDTH // 4 else {}
    block: dict[str, Any] = {"transform": [{"calculate": f"datum.cat['{choice}']", "as": "colour"}],
                             "mark": {"type": "rect", **outline},
                             "encoding": {"x": x, "x2": {"field": "end"}, "y": y, "color": _colour(choice)}}
    # The blocks share one colour scale (the choice's); the damaged ranges have their own, so that damage is in
    # the legend whatever the blocks are coloured by.
    blocks = {"layer": [
        {"name": f"{pid}_batch", "data": {"values": batches}, **block, "params": [
            {"name": f"zoom_{partition['id']}", "select": {"type": "interval", "encodings": ["x"]}, "bind": "scales"}],
         "encoding": {**block["encoding"], "tooltip": _tooltip(BATCH_TOOLTIP)}},
        {"name": f"{pid}_bin", "data": {"values": bins}, **block,
         "encoding": {**block["encoding"], "tooltip": _tooltip(BIN_TOOLTIP)}}]}
    layers = [
        blocks,
        {"name": f"{pid}_region", "data": {"values": regions},
         "transform": [{"calculate": "datum.severity === 'info' ? 'preallocated zeros' : 'damaged bytes'",
                        "as": "range"}],
         "mark": {"type": "rect", "stroke": "black", "strokeWidth": 0.5, "opacity": 0.9},
         "encoding": {"x": x, "x2": {"field": "end"}, "y": y,
                      "color": {"field": "range", "type": "nominal", "title": "ranges", "scale": RANGES},
                      "tooltip": _tooltip(("code", "pos", "end", "actual", "command"))}},
        # A range of a few bytes is narrower than a pixel: a tick marks where each begins ...
        {"name": f"{pid}_damage_start", "data": {"values": regions}, "mark": {"type": "tick", "thickness": 2},
         "encoding": {"x": x, "y": y,
                      "color": {"condition": {"test": "datum.severity === 'info'", "value": "#636363"},
                                "value": DAMAGED},
                      "tooltip": _tooltip(("code", "pos", "end", "actual", "command"))}},
        # ... and a resync point where the walk went on.
        {"name": f"{pid}_resync", "data": {"values": [region for region in regions if region["code"] == "resync"]},
         "mark": {"type": "tick", "thickness": 2, "color": "black"},
         "encoding": {"x": {**x, "field": "resumed"}, "y": y,
                      "tooltip": _tooltip(("code", "resumed", "actual"))}},
        {"name": f"{pid}_index", "data": {"values": ticks}, "mark": {"type": "tick", "thickness": 1, "color": "#252525"},
         "encoding": {"x": x, "y": y, "tooltip": _tooltip(("pos", "offset", "timestamp_iso", "entries"))}},
        {"name": f"{pid}_focus", "data": {"values": [{}]},
         "transform": [{"filter": f"focus_{partition['id']} != null"},
                       {"calculate": f"focus_{partition['id']}", "as": "pos"}],
         "mark": {"type": "rule", "color": "#ff7f0e", "strokeWidth": 2}, "encoding": {"x": x}},
    ]
    return {"title": "byte map", "width": WIDTH, "height": ROW_HEIGHT * max(1, len(_rows(partition))),
            "layer": layers, "resolve": {"scale": {"color": "independent"}}}


def timeline(partition: dict) -> dict:
    """Offsets against timestamps, with leader epochs, segment starts, gaps and overlaps."""
    pid = partition["id"]
    first, last = partition["first_offset"] or 0, (partition["last_offset"] or 0) + 1
    x = {"field": "offset", "type": "quantitative", "title": "offset", "scale": {"domain": [first, last], "nice": False},
         "axis": WHOLE_AXIS}
    points = [{"offset": block["last_offset"], "first_offset": block["first_offset"], "segment": segment["name"],
               "timestamp": block["max_ts"], "max_timestamp_iso": iso_timestamp(block["max_ts"]),
               "batches": block["batches"]}
              for segment in partition["segments"] for block in segment["blocks"] if block["max_ts"] is not None]
    starts = [{"offset": segment["first_offset"], "segment": segment["name"]}
              for segment in partition["segments"] if segment["first_offset"] is not None]
    epochs = [{**run, "offset": run["first_offset"], "end": run["last_offset"] + 1} for run in partition["epochs"]]
    boundaries = [{**band, "offset": band["from"], "end": band["to"] + 1} for band in partition["boundaries"]]
    checkpoint = [{**entry, "offset": entry["start_offset"]} for entry in partition["checkpoint_epochs"]]
    layers: list[dict[str, Any]] = [
        {"name": f"{pid}_epoch", "data": {"values": epochs}, "mark": {"type": "rect", "opacity": 0.18},
         "encoding": {"x": x, "x2": {"field": "end"},
                      "color": {"field": "epoch", "type": "ordinal", "title": "leader epoch",
                                "scale": {"scheme": "category10"}},
                      "tooltip": _tooltip(("epoch", "first_offset", "last_offset"))}},
        {"name": f"{pid}_boundary", "data": {"values": boundaries}, "mark": {"type": "rect", "opacity": 0.35},
         "encoding": {"x": x, "x2": {"field": "end"},
                      "color": {"condition": {"test": "datum.kind === 'overlap'", "value": DAMAGED}, "value": "#bdbdbd"},
                      "tooltip": _tooltip(("kind", "from", "to", "before", "after"))}},
        # A gap or overlap of a few offsets is narrower than a pixel until zoomed in: a rule marks each at any zoom.
        {"name": f"{pid}_boundary_rule", "data": {"values": boundaries}, "mark": {"type": "rule", "strokeWidth": 2},
         "encoding": {"x": x,
                      "color": {"condition": {"test": "datum.kind === 'overlap'", "value": DAMAGED}, "value": "#636363"},
                      "tooltip": _tooltip(("kind", "from", "to", "before", "after"))}},
        {"name": f"{pid}_segment_start", "data": {"values": starts}, "mark": {"type": "rule", "color": "#737373"},
         "encoding": {"x": x, "tooltip": _tooltip(("segment", "offset"))}},
        {"name": f"{pid}_checkpoint_epoch", "data": {"values": checkpoint},
         "mark": {"type": "rule", "strokeDash": [4, 3], "color": "black"},
         "encoding": {"x": x, "tooltip": _tooltip(("epoch", "start_offset"))}},
    ]
    if not points:   # magic 0 only (no timestamps), or no batch at all: the offsets alone
        return {"title": "timeline (no timestamps)", "width": WIDTH, "height": 40, "layer": layers,
                "resolve": {"scale": {"color": "independent"}}}
    layers.append(
        {"name": f"{pid}_point", "data": {"values": points}, "mark": {"type": "circle", "size": 16, "opacity": 0.8},
         "params": [{"name": f"zoom_time_{partition['id']}", "select": {"type": "interval"}, "bind": "scales"}],
         "encoding": {"x": x, "y": {"field": "timestamp", "type": "temporal", "title": "largest timestamp (UTC)",
                                    "scale": {"type": "utc"}, "axis": UTC_AXIS},
                      "color": {"field": "segment", "type": "nominal", "title": "segment",
                                "scale": {"scheme": "dark2"}},
                      "tooltip": _tooltip(("segment", "first_offset", "offset", "max_timestamp_iso", "batches"))}})
    return {"title": "timeline", "width": WIDTH, "height": 220, "layer": layers,
            "resolve": {"scale": {"color": "independent"}}}


def transactions(partition: dict) -> dict | None:
    """A span per transaction, a lane per producer, coloured by outcome."""
    pid = partition["id"]
    spans = [{**txn, "producer": f"{txn['producer_id']}/{txn['producer_epoch']}", "end": txn["end_offset"] + 1}
             for txn in partition["transactions"]]
    if not spans:
        return None
    first, last = partition["first_offset"] or 0, (partition["last_offset"] or 0) + 1
    x = {"field": "first_offset", "type": "quantitative", "title": "offset",
         "scale": {"domain": [first, last], "nice": False}, "axis": WHOLE_AXIS}
    lanes = sorted({span["producer"] for span in spans})
    return {"title": "transactions (producer id/epoch)", "width": WIDTH, "height": ROW_HEIGHT * len(lanes),
            "layer": [{"name": f"{pid}_txn", "data": {"values": spans}, "mark": {"type": "rect", "height": 14},
                       "params": [{"name": f"zoom_txn_{partition['id']}", "select": {"type": "interval",
                                                                                      "encodings": ["x"]},
                                   "bind": "scales"}],
                       "encoding": {"x": x, "x2": {"field": "end"},
                                    "y": {"field": "producer", "type": "nominal", "title": None, "sort": lanes},
                                    "color": {"field": "outcome", "type": "nominal", "scale": OUTCOMES},
                                    "tooltip": _tooltip(("producer_id", "producer_epoch", "outcome", "first_offset",
                                                         "last_offset", "marker_offset", "records", "batches",
                                                         "empty", "marker_doubt", "file"))}}]}


def replica_chart(replicas: dict) -> dict:
    """One partition's copies (kbatch map --replicas), a lane each on one offset axis: the offsets it holds, the
    spans where its batches are not every copy's, where it diverges from the leader's copy and the offset
    Kafka truncates it to (kbatch.partition.replicas), its high watermark."""
    rid = replicas["id"]
    lanes = replicas["lanes"]
    order = [lane["copy"] for lane in lanes]
    starts = [lane["log_start_offset"] for lane in lanes if lane["log_start_offset"] is not None]
    first, last = min(starts, default=0), max([lane["log_end_offset"] for lane in lanes] + [1])
    x = {"field": "first_offset", "type": "quantitative", "title": "offset",
         "scale": {"domain": [first, max(last, first + 1)], "nice": False}, "axis": WHOLE_AXIS}
    y = {"field": "copy", "type": "nominal", "title": None, "sort": order}
    held = [{**lane, "first_offset": lane["log_start_offset"], "end": lane["log_end_offset"],
             "role": "leader (newest epoch)" if lane["leader"] else "follower"}
            for lane in lanes if lane["log_start_offset"] is not None]
    spans = [{**span, "end": span["last_offset"] + 1} for span in replicas["spans"]]
    marks = [{"copy": lane["copy"], "mark": mark, "first_offset": lane[key], "offset": lane[key]}
             for lane in lanes for mark, key in (("diverges at", "diverges_at"), ("truncated to", "truncate_to"),
                                                 ("high watermark", "high_watermark"))
             if lane[key] is not None]
    layers = [
        {"name": f"{rid}_lane", "data": {"values": held}, "mark": {"type": "rect", "color": LANE_EXTENT},
         "params": [{"name": f"zoom_{rid}", "select": {"type": "interval", "encodings": ["x"]}, "bind": "scales"}],
         "encoding": {"x": x, "x2": {"field": "end"}, "y": y,
                      "tooltip": _tooltip(("copy", "path", "role", "log_start_offset", "log_end_offset",
                                           "high_watermark", "latest_epoch", "diverges_at", "truncate_to",
                                           "damaged"))}},
        {"name": f"{rid}_span", "data": {"values": spans}, "mark": {"type": "rect", "height": LANE_HEIGHT // 2},
         "encoding": {"x": x, "x2": {"field": "end"}, "y": y,
                      "color": {"field": "state", "type": "nominal", "title": "batches", "scale": LANE_SPANS},
                      "tooltip": _tooltip(("copy", "state", "first_offset", "last_offset", "batches"))}},
        # A mark of one offset is narrower than a pixel: a tick at any zoom, each kind on a third of the lane (two
        # at one offset stay apart).
        {"name": f"{rid}_mark", "data": {"values": marks}, "mark": {"type": "tick", "thickness": 3,
                                                                    "size": LANE_HEIGHT // 3 - 2},
         "encoding": {"x": x, "y": y,
                      "yOffset": {"field": "mark", "type": "nominal", "sort": LANE_MARKS["domain"],
                                  "scale": {"domain": LANE_MARKS["domain"]}},
                      "color": {"field": "mark", "type": "nominal", "title": "offsets", "scale": LANE_MARKS},
                      "tooltip": _tooltip(("copy", "mark", "offset"))}},
    ]
    leader = f"; {replicas['leader']} holds the newest leader epoch: the others follow it" if replicas["leader"] \
        else ""
    return {"$schema": VEGA_LITE_SCHEMA, "title": {"text": f"{replicas['name']}: {len(lanes)} copies",
                                                   "subtitle": "a lane per copy, offsets aligned" + leader},
            "width": WIDTH, "height": LANE_HEIGHT * max(1, len(lanes)), "layer": layers,
            "resolve": {"scale": {"color": "independent"}}, "config": CONFIG}


def partition_chart(partition: dict, choice: str) -> dict:
    charts = [byte_map(partition, choice), timeline(partition)]
    spans = transactions(partition)
    if spans is not None:
        charts.append(spans)
    # Where a finding picked beside the picture lies (the page's script sets it).
    focus = {"name": f"focus_{partition['id']}", "value": None}
    return {"$schema": VEGA_LITE_SCHEMA, "title": partition["name"], "params": [focus], "vconcat": charts,
            "resolve": {"scale": {"x": "independent", "y": "independent", "color": "independent"}},
            "config": CONFIG}


def directory_chart(model: dict) -> dict:
    """The log directory: a bar per partition, its size, coloured by damage."""
    rows = [{"partition": partition["name"], "id": partition["id"], "size": partition["size"],
             "segments": partition["segment_count"], "errors": partition["errors"],
             "damage": "damaged" if partition["errors"] else "intact",
             "from": iso_timestamp(partition["min_ts"]), "to": iso_timestamp(partition["max_ts"])}
            for partition in model["partitions"]]
    return {"$schema": VEGA_LITE_SCHEMA, "title": "log directory", "width": WIDTH,
            "height": ROW_HEIGHT * max(1, len(rows)), "data": {"values": rows},
            "mark": {"type": "bar", "name": "partition"},
            "encoding": {"y": {"field": "partition", "type": "nominal", "sort": None, "title": None},
                         "x": {"field": "size", "type": "quantitative", "title": "bytes", "axis": WHOLE_AXIS},
                         "color": {"field": "damage", "type": "nominal", "scale": COLOUR_SCALES["damage"]},
                         "tooltip": _tooltip(("partition", "size", "segments", "from", "to", "errors"))}}


# -- SVG -------------------------------------------------------------------------------------------------

def svg(model: dict, choice: str) -> str:
    """The whole map as one static SVG picture (vl-convert renders it without a browser)."""
    import vl_convert

    model = utf8_model(model, visible)

    charts = [partition_chart(partition, choice) for partition in model["partitions"]]
    if len(model["partitions"]) > 1:
        charts.insert(0, directory_chart(model))
    charts[:0] = [replica_chart(replicas) for replicas in model["replicas"]]
    for chart in charts:
        chart.pop("$schema", None)
    spec = {"$schema": VEGA_LITE_SCHEMA, "vconcat": charts, "config": CONFIG,
            "resolve": {"scale": {"x": "independent", "y": "independent", "color": "independent"}},
            "title": {"text": "kbatch map", "subtitle": _summary(model)}}
    return vl_convert.vegalite_to_svg(_static(spec), vl_version=_vega_lite_version())


@functools.lru_cache(maxsize=1)
def _bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script for the page (vl-convert bundles them: ~0.9 MB, ~2 s)."""
    import vl_convert

    return vl_convert.javascript_bundle("window.vegaEmbed = vegaEmbed; window.vega = vega;",
                                        vl_version=_vega_lite_version())


def _vega_lite_version() -> str:
    """The newest Vega-Lite of the specs' major version that vl-convert carries ("6.4")."""
    import vl_convert

    versions = [version for version in vl_convert.get_vegalite_versions()
                if version.split(".")[0] == str(VEGA_LITE_MAJOR)]
    return max(versions, key=lambda version: tuple(int(part) for part in version.split(".")))


def _static(spec):
    """A spec without what only a page uses (zoom, the focus on a finding), which a picture has no use for."""
    if isinstance(spec, dict):
        return {key: _static(value) for key, value in spec.items() if key != "params"}
    if isinstance(spec, list):
        return [_static(value) for value in spec
                if not (isinstance(value, dict) and str(value.get("name", "")).endswith("_focus"))]
    return spec


def _summary(model: dict) -> str:
    partitions = model["partitions"]
    segments = sum(partition["segment_count"] for partition in partitions)
    found = len(model["findings"]) + sum(model["findings_left_off"].values())
    return (f"{len(partitions)} partition(s), {segments} segment(s), "
            f"{sum(partition['size'] for partition in partitions)} bytes; {found} finding(s), "
            f"{model['errors']} of them damage")


# -- HTML ------------------------------------------------------------------------------------------------

def utf8_model(value, name=json_name):
    """The model with every name UTF-8 (kbatch.output.visible.json_name), for JSON; with ``name=visible``,
    every name and string as a person may be shown it, for the page and the picture (a control character
    would stop vl-convert's SVG parser; a bidi control would reorder a label).  A block's ``command`` is a
    command line already safe to show (kbatch.output.visible.shell_word): kept as it is, to paste."""
    if isinstance(value, str):
        return name(value)
    if isinstance(value, dict):
        return {key: item if key == "command" else utf8_model(item, name) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [utf8_model(item, name) for item in value]
    return value



def json_document(model: dict) -> str:
    """The model as the JSON document ``--format json`` writes (every name UTF-8: :func:`utf8_model`)."""
    return json.dumps(utf8_model(model), indent=1) + "\n"

def _script_json(value) -> str:
    """JSON to sit inside a <script> element: no '<' at all, so no name of a file ('</script>', '<!--') can end
    it early or change how the page reads it (JSON reads \\u003c as '<')."""
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c")


def html_page(model: dict, choice: str) -> str:
    """One self-contained page: every script and style inline, nothing fetched when it is viewed."""
    import vl_convert  # noqa: F401 - not installed: the ImportError before any work is done

    model = utf8_model(model, visible)

    specs = {partition["id"]: partition_chart(partition, choice) for partition in model["partitions"]}
    directory = directory_chart(model) if len(model["partitions"]) > 1 else None
    lanes = {replicas["id"]: replica_chart(replicas) for replicas in model["replicas"]}
    bundle = _bundle()
    colour_scales = {name: _colour(name) for name in COLOR_CHOICES}
    sections = "\n".join(_partition_section(partition) for partition in model["partitions"])
    return PAGE.format(
        title=html.escape("kbatch map: " + ", ".join(partition["name"] for partition in model["partitions"][:3])
                          + (" ..." if len(model["partitions"]) > 3 else "")),
        style=STYLE, bundle=bundle.replace("</script", "<\\/script"),
        summary=html.escape(_summary(model)),
        choices="".join(f'<option value="{name}"{" selected" if name == choice else ""}>{name}</option>'
                        for name in COLOR_CHOICES),
        directory=_directory_table(model) if directory is not None else "",
        replicas="\n".join(_replicas_section(replicas) for replicas in model["replicas"]),
        sections=sections, findings=_findings_list(model),
        data=_script_json({"specs": specs, "directory": directory, "replicas": lanes, "colours": colour_scales,
                           "choice": choice}),
        script=SCRIPT)


def _replicas_section(replicas: dict) -> str:
    lanes = "".join(
        f'<tr><td>{html.escape(lane["copy"])}{" *" if lane["leader"] else ""}</td>'
        + "".join(f'<td class="n">{"-" if lane[key] is None else lane[key]}</td>'
                  for key in ("log_start_offset", "log_end_offset", "high_watermark", "latest_epoch", "diverges_at",
                              "truncate_to"))
        + "</tr>" for lane in replicas["lanes"])
    problems = "".join(f'<p class="meta">{html.escape(problem)}</p>' for problem in replicas["problems"])
    left = f'<p class="meta">{replicas["spans_left_off"]} more spans not drawn</p>' if replicas["spans_left_off"] else ""
    return (f'<section class="replicas" id="{replicas["id"]}"><h2>{html.escape(replicas["name"])}: '
            f'{len(replicas["lanes"])} copies</h2>{problems}<table><thead><tr><th>copy</th><th>start</th><th>end</th>'
            '<th>hw</th><th>epoch</th><th>diverges</th><th>truncate</th></tr></thead>'
            f'<tbody>{lanes}</tbody></table><p class="meta">* the copy with the newest leader epoch: the others '
            f'follow it (kbatch replicas tells what each would lose)</p>{left}'
            f'<div class="chart" id="chart-{replicas["id"]}"></div></section>')


def _partition_section(partition: dict) -> str:
    segments = ", ".join(html.escape(segment["name"]) for segment in partition["segments"][:8])
    more = f" and {partition['segment_count'] - 8} more" if partition["segment_count"] > 8 else ""
    left = f"; {partition['transactions_left_off']} more transactions not drawn" if partition["transactions_left_off"] else ""
    binned = [f"{segment['name']} ({segment['batches']} batches in {len(segment['blocks'])} bins of "
              f"{segment['bin_bytes']} bytes)" for segment in partition["segments"] if segment["binned"]]
    bins = f"; drawn as bins of bytes: {', '.join(binned)}" if binned else ""
    return (f'<section class="partition" id="{partition["id"]}"><h2>{html.escape(partition["name"])}</h2>'
            f'<p class="meta">{html.escape(partition["path"])}: {partition["size"]} bytes, {partition["segment_count"]} '
            f'segment(s) ({segments}{more}), {partition["batches"]} batches, offsets {partition["first_offset"]}..'
            f'{partition["last_offset"]}, {iso_timestamp(partition["min_ts"]) or "-"} .. '
            f'{iso_timestamp(partition["max_ts"]) or "-"}{html.escape(left + bins)}</p>'
            f'<div class="chart" id="chart-{partition["id"]}"></div></section>')


def _directory_table(model: dict) -> str:
    largest = max((partition["size"] for partition in model["partitions"]), default=0) or 1
    rows = "".join(
        f'<tr class="{"damaged" if partition["errors"] else "intact"}">'
        f'<td><a href="#{partition["id"]}">{html.escape(partition["name"])}</a></td>'
        f'<td class="n">{partition["size"]}</td>'
        f'<td><span class="bar" style="width:{max(1, round(100 * partition["size"] / largest))}px"></span></td>'
        f'<td class="n">{partition["segment_count"]}</td>'
        f'<td>{iso_timestamp(partition["min_ts"]) or "-"}</td><td>{iso_timestamp(partition["max_ts"]) or "-"}</td>'
        f'<td class="n">{partition["errors"]}</td></tr>'
        for partition in model["partitions"])
    return ('<section id="directory"><h2>log directory</h2><table><thead><tr><th>partition</th><th>bytes</th>'
            '<th></th><th>segments</th><th>from</th><th>to</th><th>damage</th></tr></thead>'
            f'<tbody>{rows}</tbody></table><div class="chart" id="chart-directory"></div></section>')


def _findings_list(model: dict) -> str:
    if not model["findings"]:
        return "<p>No findings.</p>"
    items = []
    for finding in model["findings"]:
        target = finding["segment"] or finding["partition"]
        where = f'{html.escape(finding["file"])} pos {finding["pos"]}'
        items.append(
            f'<li class="{finding["severity"]}"><a href="#{finding["partition"]}" data-partition="{finding["partition"]}"'
            f' data-segment="{finding["segment"] or ""}" data-pos="{finding["pos"] if finding["segment"] else ""}"'
            f' data-target="{target}"><b>{finding["code"]}</b> {where}</a>'
            f'<div class="detail">{html.escape(finding["field"])}: expected {html.escape(finding["expected"])}, '
            f'found {html.escape(finding["actual"])}</div></li>')
    left = model["findings_left_off"]
    more = (f'<p>and {sum(left.values())} more: ' + ", ".join(f"{code} {n}" for code, n in left.items()) + "</p>") \
        if left else ""
    return f'<ol>{"".join(items)}</ol>{more}'


STYLE = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; display: flex; color: #222; }
main { flex: 1; padding: 8px 16px; min-width: 0; }
aside { width: 250px; max-height: 100vh; overflow: auto; position: sticky; top: 0; padding: 8px;
        border-right: 1px solid #ddd; background: #fafafa; }
aside ol { padding-left: 20px; } aside li { margin-bottom: 6px; }
aside a { text-decoration: none; color: #222; word-break: break-all; }
aside li.error b { color: #d62728; } aside li.warning b { color: #e6550d; } aside li.info b { color: #636363; }
.detail { color: #666; font-size: 11px; word-break: break-word; }
h1 { font-size: 17px; margin: 4px 0; } h2 { font-size: 15px; margin: 14px 0 2px; }
.meta { color: #555; margin: 0 0 4px; }
.chart, .chart.vega-embed { display: block; width: 100%; }   /* what the page's script fits a chart into */
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; } td.n { text-align: right; }
tr.damaged td:last-child { color: #d62728; font-weight: bold; }
.bar { display: inline-block; height: 10px; background: #9ecae1; }
#copied { position: fixed; bottom: 10px; right: 10px; background: #333; color: #fff; padding: 4px 8px;
          border-radius: 4px; display: none; }
"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{style}</style>
<script>{bundle}</script>
</head><body>
<aside id="findings"><h2>findings</h2>{findings}</aside>
<main>
<h1>kbatch map</h1>
<p class="meta">{summary}. Colour by <select id="colour-by">{choices}</select>.
Drag or scroll over a chart to zoom (double-click resets); hover a block for its fields; click one to copy the
kbatch command that opens it.</p>
{replicas}
{directory}
{sections}
</main>
<div id="copied"></div>
<script type="application/json" id="kbatch-map">{data}</script>
<script>{script}</script>
</body></html>
"""

# The page's own script: embeds each chart, redraws on a colour choice, copies a block's command on a click,
# points a finding out in its chart.  What it drew is written to the page (#drawn) for tests to read back.
SCRIPT = r"""
(function () {
  const errors = [];
  window.addEventListener("error", e => errors.push(String(e.message)));
  window.addEventListener("unhandledrejection", e => errors.push(String(e.reason)));
  const data = JSON.parse(document.getElementById("kbatch-map").textContent);
  const views = {}, widths = {}, fits = {};

  function recolour(layers, choice) {
    for (const layer of layers) {
      if (layer.layer) recolour(layer.layer, choice);
      if (/_(batch|bin)$/.test(layer.name)) {
        layer.transform = [{calculate: "datum.cat['" + choice + "']", as: "colour"}];
        layer.encoding.color = data.colours[choice];
      }
    }
  }

  // Charts as wide as the window lets them be: each chart's width is what its element has left after the axes
  // and legends (measured once drawn; Vega-Lite's "container" width does not reach into stacked charts).
  function widen(spec, width) {
    for (const chart of spec.vconcat || [spec]) chart.width = width;
    return spec;
  }

  function copy(text) {
    const note = document.getElementById("copied");
    const shown = () => { note.textContent = "copied: " + text; note.style.display = "block";
                          setTimeout(() => { note.style.display = "none"; }, 2500); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(shown, () => { window.prompt("kbatch command", text); });
    } else {
      const area = document.createElement("textarea");
      area.value = text; document.body.appendChild(area); area.select();
      try { document.execCommand("copy"); shown(); } catch (e) { window.prompt("kbatch command", text); }
      area.remove();
    }
  }

  function embed(id, spec, width) {
    const element = document.getElementById("chart-" + id);
    const room = element.clientWidth;
    return vegaEmbed(element, widen(spec, width), {renderer: "canvas", actions: false}).then(result => {
      const drawnWidth = result.view.container().querySelector("canvas").clientWidth;
      const fitted = Math.max(200, Math.floor(width + room - drawnWidth));
      if (Math.abs(fitted - width) > 2 && widths[id] === undefined) {
        widths[id] = fitted;   // (once: a legend's width does not depend on the chart's)
        result.view.finalize();
        return embed(id, spec, fitted);
      }
      views[id] = result.view;
      widths[id] = width;
      fits[id] = {room: room, drawn: drawnWidth};
      result.view.addEventListener("click", (event, item) => {
        if (item && item.datum && item.datum.command) copy(item.datum.command);
      });
    });
  }

  function marks(scene, out) {
    if (!scene) return out;
    if (scene.marktype && scene.name) {
      for (const item of scene.items || []) {
        if (item.datum) out.push({mark: scene.name, datum: item.datum, x: item.x, width: item.width, fill: item.fill});
      }
    }
    for (const item of scene.items || []) marks(item, out);
    return out;
  }

  function report() {
    const drawn = {errors: errors, charts: {}, counts: {}, widths: widths, fits: fits};
    for (const [id, view] of Object.entries(views)) {
      const found = marks(view.scenegraph().root, []);
      drawn.counts[id] = {};
      for (const m of found) drawn.counts[id][m.mark] = (drawn.counts[id][m.mark] || 0) + 1;
      drawn.charts[id] = found.filter(m => /_(region|txn|batch|span|mark)_marks$/.test(m.mark)).slice(0, 5000).map(m => ({
        mark: m.mark, x: m.x, width: m.width, fill: m.fill, pos: m.datum.pos, end: m.datum.end,
        first_offset: m.datum.first_offset, end_offset: m.datum.end_offset, outcome: m.datum.outcome,
        code: m.datum.code, segment: m.datum.segment, copy: m.datum.copy, state: m.datum.state,
        offset_mark: m.datum.mark}));
    }
    drawn.resources = performance.getEntriesByType("resource").map(r => r.name);
    const out = document.createElement("pre");
    out.id = "drawn"; out.style.display = "none"; out.textContent = JSON.stringify(drawn);
    document.body.appendChild(out);
    document.body.dataset.state = errors.length ? "failed" : "drawn";
  }

  function drawAll(choice) {
    const jobs = Object.entries(data.specs).map(([id, spec]) => {
      recolour(spec.vconcat[0].layer, choice);
      return embed(id, spec, widths[id] || spec.vconcat[0].width);
    });
    if (data.directory) jobs.push(embed("directory", data.directory, widths.directory || data.directory.width));
    for (const [id, spec] of Object.entries(data.replicas)) jobs.push(embed(id, spec, widths[id] || spec.width));
    return Promise.all(jobs);
  }

  const picker = document.getElementById("colour-by");
  picker.addEventListener("change", e => { drawAll(e.target.value); });
  let resizing = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => { for (const id in widths) delete widths[id]; drawAll(picker.value); }, 250);
  });
  for (const link of document.querySelectorAll("#findings a")) {
    link.addEventListener("click", () => {
      const view = views[link.dataset.partition];
      if (view && link.dataset.pos !== "") {
        view.signal("focus_" + link.dataset.partition, Number(link.dataset.pos)).runAsync();
      }
    });
  }
  // The colouring may be named in the address (map.html#colour=damage), to link to a view.
  const asked = new URLSearchParams(location.hash.slice(1)).get("colour");
  // an own key only: "constructor" or "__proto__" is in every object, and no colouring
  const choice = Object.prototype.hasOwnProperty.call(data.colours, asked) ? asked : data.choice;
  document.getElementById("colour-by").value = choice;
  drawAll(choice).then(report, e => { errors.push(String(e)); report(); });
})();
"""
