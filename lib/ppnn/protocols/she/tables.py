"""SHE's tables (she.txt Tables 2, 4-7): our values in the paper's units, with provenance.

Builders take our measurements in base units -- counts, depths, bytes, seconds, percent -- and
return ``ppnn.report`` frames (``row, metric, value, note, kind``) in the unit the transcribed
paper cell uses (``count (x1e3)``, ``MB`` ...). The notebook passes them to
:func:`ppnn.report.compare`. Rows of schemes this toolkit does not implement (other
cryptosystems: CryptoNets' YASHE, BFV, HEAAN, DiNN ...) get no value and a reason.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from ppnn import report

__all__ = ["unit_scale", "frame", "OTHER_SCHEMES", "LIL_REASON", "ERRATA", "table2_values",
           "per_layer_md"]

#: schemes of Tables 4-5 that are not TFHE gate circuits (or not ours)
OTHER_SCHEMES = {
    "CNT": "CryptoNets (YASHE leveled HE, x^2 activations)",
    "FCN": "Faster CryptoNets (FV-RNS, pruned and quantized CryptoNets)",
    "GHE": "nGraph-HE (HEAAN/CKKS)",
    "Lola": "LoLa (BFV with message packing)",
    "DiNN": "DiNN (TFHE with binarized 1-bit network)",
    "NED": "NED / CryptoDL (BGV, high-degree polynomial activations)",
}
LIL_REASON = ("leveled TFHE (LIL) has no counterpart in tfhe-rs: tfhe-rs bootstraps every gate "
              "(the paper's 3-level TLWE/TRLWE/TRGSW leveled mode is not implemented there)")

#: inconsistencies found in she.txt (written with ppnn.report.save_errata)
ERRATA = [
    {"where": "Sec 5.2 vs Table 5", "finding": "DSHE CIFAR-10 accuracy printed as 94.62% in "
     "Table 5 and as 96.62% in the text", "evidence": "Table 5 DSHE Acc 94.62; Sec 5.2 'to "
     "increase the inference accuracy to 96.62%'"},
    {"where": "Table 4 SHE/DSHE, Table 5 SHE/DSHE", "finding": "HOPs is about half the sum of "
     "the listed operation counts", "evidence": "MNIST SHE: 19K+945+19K+3K = 42K vs HOPs 23K; "
     "CIFAR SHE 4.4M+13K+4.4M+16K = 8.8M vs 4.4M; DSHE 136M vs 68M"},
    {"where": "Table 5 FCN, Table 6 ShuffleNet TCN", "finding": "HOPs smaller than its own "
     "parts", "evidence": "FCN 610M < CC_Add+PC_Mult = 700M; Shuffle TCN HOPs 56M < CC_Add "
     "0.14G"},
    {"where": "Table 2 totals", "finding": "printed MD totals differ from the per-layer sums",
     "evidence": "FCN 21K vs 20.9K, TCN 9.0K vs 7.9K, SHE 2.0K vs 2.3K, DSHE 6.8K vs 6.4K"},
    {"where": "Table 2 vs Table 4", "finding": "the same networks' MD differ between tables",
     "evidence": "TCN 9.0K (Table 2, Sec 3.4) vs 8.8K (Table 4); DSHE 6.8K vs 6.2K"},
    {"where": "Table 4 SHE vs network", "finding": "SHE MNIST counts are inconsistent with the "
     "stated topology 'the same as CNT'", "evidence": "PC_Shift 19K shifts vs CNT's 296K "
     "plaintext multiplications (PC_Mult) for the same C-B-A-P-C-P-F-B-A-F network; 19K is "
     "about the first convolution alone (5x13x13 outputs x 25 = 21K)"},
]


def unit_scale(unit: str) -> tuple[float, str]:
    """Divide a base-unit value by the returned factor to get the paper's unit.

    Base units: counts, depth, seconds, bytes (MB/GB: binary, as the paper's
    784 x 5 x 32KB = 122.5MB), percent, PPW.
    """
    m = re.search(r"\(x1e(\d+)\)", unit)
    if m:
        return 10.0 ** int(m.group(1)), unit
    if unit.strip() == "MB":
        return float(2**20), unit
    if unit.strip() == "GB":
        return float(2**30), unit
    return 1.0, unit


def frame(table: str, values: dict, paper: str = "she") -> pd.DataFrame:
    """``values``: ``{(row, metric): (value_in_base_units | None, kind, note)}`` -> a frame in
    the paper's units (unknown cells are kept as "ours only" with the base value)."""
    ref = report.load_paper(paper, table).set_index(["row", "metric"])
    recs = []
    for (row, metric), (v, kind, note) in values.items():
        if (row, metric) in ref.index and v is not None and not (
                isinstance(v, float) and math.isnan(v)):
            scale, _ = unit_scale(ref.loc[(row, metric), "unit"])
            v = float(v) / scale
        recs.append({"row": row, "metric": metric, "value": v, "note": note, "kind": kind})
    return pd.DataFrame(recs, columns=["row", "metric", "value", "note", "kind"])


def per_layer_md(layers: pd.DataFrame) -> list[tuple[str, int]]:
    """Split an inference's per-layer depths into the paper's C / B / A / P columns.

    ``layers``: :class:`~ppnn.protocols.she.network.InferenceResult.layers`. A linear layer
    contributes C (its accumulator and bias adder) and, if followed by a ReLU, A (the
    ReLU-and-saturate unit); batch-norm is folded (B = 0); a signed saturation (no ReLU in the
    topology) counts towards its C.
    """
    out = []
    prev = 0
    for r in layers.itertuples(index=False):
        if r.kind == "maxpool":
            out.append(("P", int(r.md_out - prev)))
        else:
            relu = r.cc_com > 0
            c = (r.md_linear if relu else r.md_out) - prev
            out.append(("C" if r.kind == "conv" else "F", int(c)))
            if relu:
                out.append(("B", 0))
                out.append(("A", int(r.md_out - r.md_linear)))
        prev = r.md_out
    return out


def table2_values(row: str, layers: pd.DataFrame, accuracy: float | None, topology: list[str],
                  kind_note: str) -> dict:
    """Table 2 cells of one scheme: per-layer MD in the paper's layer order, total, accuracy.

    ``topology`` is the paper's letter sequence (e.g. ``list("CBAPCPFBAF")``); our layers are
    matched to it in order; our ``B`` are 0 (folded into C).
    """
    ours = per_layer_md(layers)
    vals: dict = {}
    j = 0
    for i, letter in enumerate(topology, 1):
        # next of ours with the same letter (B may be absent in ours after a linear w/o ReLU)
        while j < len(ours) and ours[j][0] != letter:
            j += 1
        if j < len(ours):
            d = ours[j][1]
            j += 1
        else:
            d = None
        note = kind_note + ("; batch-norm folded into the linear layer: no gates" if
                            letter == "B" else "")
        vals[(row, f"md_layer{i:02d}_{letter}")] = (d, "counted", note)
    vals[(row, "md_total")] = (int(layers["md_out"].max()), "counted",
                               kind_note + "; critical path of the whole network (carries of "
                               "consecutive adders overlap, so it is not the sum of the "
                               "layers' adder widths as in the paper's Eq. 1)")
    vals[(row, "accuracy")] = (accuracy, "measured", "integer model = encrypted circuit "
                               "(checked on a subset through the gate simulator); MNIST test")
    return vals
