"""The glossary is complete and the notebooks link it where a term is first used.

``TERMS`` is the list of the notebooks' technical terms: glossary anchor -> the patterns that
find the term in a notebook's prose. Every anchor must be a term of GLOSSARY.md, every link
from a notebook into the glossary must land on a defined term, and in every notebook the first
use of each term in its prose (headings, code, math and link targets aside) must be a link to
the glossary.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "GLOSSARY.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
LINK = "../GLOSSARY.md#"

I = re.IGNORECASE
# anchor -> (pattern, flags); patterns match the term as the notebooks write it
TERMS: dict[str, tuple[str, int]] = {
    "ring": (r"\bring\s+\$\\mathbb\{Z\}|\bthe ring\b", I),
    "fixed-point": (r"\bfixed[ -]point\b", I),
    "truncation": (r"\btruncat(?:ion|e|es|ed)\b", I),
    "additive-secret-sharing": (r"\badditive(?:ly)? (?:secret[ -])?shar(?:ing|es|ed)\b", I),
    "beaver-triple": (r"\bBeaver (?:triple|multiplication|product)s?\b", I),
    "dealer": (r"\bdealer\b|\bpreprocessing\b", I),
    "view": (r"\bviews?\b", I),
    "ks-test": (r"\bKolmogorov|\bKS\b", 0),
    "oblivious-transfer": (r"\boblivious transfer\b|\bOTs?\b", 0),
    "iknp": (r"\bIKNP\b", 0),
    "garbled-circuit": (r"\bgarbled[ -]circuits?\b", I),
    "free-xor": (r"\bfree-XOR\b", I),
    "half-gates": (r"\bhalf-gates?\b", I),
    "delphi": (r"\bDelphi\b", I),
    "secure-lookup-table": (r"\blookup tables?\b|\btable lookups?\b", I),
    "homomorphic-encryption": (r"\bhomomorphic(?:ally)?\b", I),
    "bfv": (r"\bBFV\b", 0),
    "slots": (r"\bslots?\b|\bbatching\b|\bSIMD\b", I),
    "rotation": (r"\brotations?\b|\bPerms?\b", 0),
    "key-switching": (r"\bkey[ -]switching\b", I),
    "hoisting": (r"\bhoist(?:ing|ed)\b|\bHstPerm\b", I),
    "ntt": (r"\bNTT\b", 0),
    "scmult": (r"\bScMult\b", 0),
    "rotate-and-sum": (r"\brotate-and-sum\b|\bRaS\b", I),
    "noise-budget": (r"\bnoise budget\b", I),
    "noise-flooding": (r"\b(?:noise )?flooding\b|\bcircuit privacy\b", I),
    "gazelle": (r"\bGAZELLE\b", I),
    "paillier": (r"\bPaillier\b", 0),
    "packing": (r"\bpacking\b", I),
    "multi-exponentiation": (r"\bmulti-exponentiation\b", I),
    "masked-decryption": (r"\bmasked decryptions?\b", I),
    "threshold-decryption": (r"\bthreshold decryption\b|\bpartial decryptions?\b", I),
    "aby": (r"\bABY\b", 0),
    "a2b": (r"\bA2B\b|\bB2A\b", 0),
    "ot-triples": (r"\bOT[- ](?:multiplication )?triples?\b", 0),
    "lwe": (r"\bLWE\b", 0),
    "tfhe-gate-bootstrapping": (r"\b(?:gate )?bootstrap(?:ping|s|ped)?\b", I),
    "pbs": (r"\bPBS\b|\bprogrammable bootstrapping\b", I),
    "shortint": (r"\bshortint\b", I),
    "multiplicative-depth": (r"\b(?:multiplicative )?depth\b", I),
    "logarithmic-quantization": (r"\blogarithmic (?:\(power-of-two\) )?quantization\b", I),
    "mixed-bitwidth-accumulator": (r"\bmixed-bitwidth accumulator\b", I),
    "replicated-secret-sharing": (r"\breplicated (?:secret[ -])?shar(?:ing|es)\b", I),
    "reshare": (r"\breshar(?:ing|e|es)\b", I),
    "prf": (r"\bPRF\b", 0),
    "wrap-function": (r"\bwrap function\b|\bMSB\b", 0),
    "private-compare": (r"\bprivate compare\b", I),
    "semi-honest-malicious": (r"\bsemi-honest\b|\bmalicious(?:ly)?\b", I),
    "ledger": (r"\bledgers?\b", I),
    "round": (r"\brounds?\b", I),
    "network-model": (r"\bnetwork model\b|\bprojected\b", I),
    "statistical-security": (r"\bstatistical security\b|\\kappa", I),
    "quick-mode": (r"\bquick mode\b", I),
}


def glossary_anchors() -> set[str]:
    return set(re.findall(r'<a id="([a-z0-9-]+)"></a>\n### ', GLOSSARY.read_text()))


def _prose_cells(nb_path: Path):
    """The notebook's markdown cells, up to its reproduced-tables section and after it."""
    nb = jupytext.read(nb_path)
    skipping = False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        heading = re.match(r"#+ ", cell.source)
        if heading:
            skipping = "Reproduced tables" in cell.source.splitlines()[0]
        if not skipping:
            yield cell.source


_MASK = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\]\([^)]*\)|<[^>]+>|^#+ [^\n]*",
                   re.MULTILINE | re.DOTALL)


def _first_use(text: str, pattern: str, flags: int) -> re.Match | None:
    """First match of the term outside code, math, link targets, HTML and headings."""
    masked = _MASK.sub(lambda m: " " * len(m.group()), text)
    return re.search(pattern, masked, flags)


def _is_linked(text: str, pos: int, anchor: str) -> bool:
    """Whether the text at ``pos`` lies inside ``[...](../GLOSSARY.md#anchor)``."""
    start = text.rfind("[", 0, pos + 1)
    end = text.find("](", pos)
    if start < 0 or end < 0 or "]" in text[start:end] or "\n\n" in text[start:end]:
        return False
    return text.startswith(f"]({LINK}{anchor})", end)


def test_every_term_of_the_list_is_in_the_glossary():
    missing = sorted(set(TERMS) - glossary_anchors())
    assert not missing, f"terms without a glossary entry: {missing}"


def test_every_glossary_term_has_a_paragraph_and_says_where_it_matters():
    text = GLOSSARY.read_text()
    for anchor in glossary_anchors():
        entry = text.split(f'<a id="{anchor}"></a>\n### ', 1)[1].split("\n<a id=", 1)[0]
        body = entry.split("\n", 1)[1]
        assert len(body.split()) >= 15, f"{anchor}: a definition of a paragraph, please"
        assert "*Where it matters:" in body, anchor


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_links_into_the_glossary_land_on_a_term(nb):
    anchors = glossary_anchors()
    linked = re.findall(re.escape(LINK) + r"([A-Za-z0-9-]*)\)", nb.read_text())
    assert not sorted(set(linked) - anchors)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_term_links_to_the_glossary_at_its_first_use(nb):
    unlinked = []
    for anchor, (pattern, flags) in TERMS.items():
        for text in _prose_cells(nb):
            m = _first_use(text, pattern, flags)
            if m:
                if not _is_linked(text, m.start(), anchor):
                    unlinked.append(f"{anchor}: {text[max(0, m.start() - 30):m.end() + 30]!r}")
                break
    assert not unlinked, "first uses not linked to the glossary:\n" + "\n".join(unlinked)
