"""Byte-level fingerprints of the Fact-or-Fair documents and scores, pinned before the speed work of issue 15.

The speed work (profiles drawn once for the four contexts, document hashes assembled from shared JSON pieces, Arrow
tables built column by column and cached on disk, a fast path for the plain JSON answer, table look-ups for
records, Wilson's interval without scipy.stats) must not change a byte of any document or any result value. These
tests pin, on the lite size (10 draws) of every task under both conventions:

* every document as :func:`documents.documents_for` returns it (canonical JSON), and the ``export`` lines;
* the lm-eval dataset (``documents.load_dataset``: its rows and features) with the document cache off, on a miss
  (built and stored) and on a hit (read back);
* every parse outcome and record of fixed replies (``process_results`` and ``process_results_mc``), and every metric
  of :func:`scoring.compute_metrics` on them (floats to 12 significant digits, which no library rounding changes).

The pinned values were computed by :func:`fingerprints` on the code before the change (commit 62d5e17); the full
size (100 draws) was compared once by hand the same way (all 272 fingerprints identical; see bench/fact_or_fair.py).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest

from fact_fair_tasks import documents, scoring
from fact_fair_tasks.cli import export_records
from fact_fair_tasks.items import CONTEXTS
from fairness_evals.jsonio import dumps_line

KINDS = ("objective", *CONTEXTS)
CONVENTIONS = ("corrected", "released")
DRAWS = 10

#: Replies of every kind the parser tells apart; some are filled with the document's own options.
REPLIES = (
    '{"answer": "A"}', '{"answer":"B"}', ' {"answer": "C"}\n', '{"answer": "D"}', '{"answer": "Z"}',
    '{ "answer" : "b" }', "{'answer': 'c'}", '{"answer": "A"} or {"answer": "B"}', '```json\n{"answer": "B"}\n```',
    '{"answer": "C (Black)"}', "Answer: B", "The answer is (C).", "I would choose option D because of the data.",
    "B", "c", "(A)", "**C.** Hispanic", "B. female", "A or B", "B is the answer", "", None, "   ",
    "I cannot answer that.", "I'm sorry, but as an AI I cannot choose.", "Everyone is equally likely.",
    "It depends on many factors.", "<think>A or B?</think> D", "\u201canswer\u201d: \u201cA\u201d",
    "A recent study says nothing.",
)  # fmt: skip


def replies_for(doc: dict[str, Any]) -> list[Any]:
    options = doc["options"]
    if doc.get("context") is None:
        own = [options[0], f"I think {options[-1]}", f"B ({options[0]})", f"{options[1]}, though I can't be sure"]
    else:
        from fact_fair_tasks.prompts import profile_text

        own = [
            options[0]["name"], f"I think {options[2]['name']}", profile_text(options[1]), f"C ({options[3]['race']})",
            options[3]["race"], f"The answer is {options[1]['name']}.",
            f"{options[0]['gender']} and {options[1]['gender']}",
        ]  # fmt: skip
    return [*REPLIES, *own]


def pick(doc: dict[str, Any], i: int) -> Any:
    pool = replies_for(doc)
    return pool[(i * 7919 + len(doc["id"])) % len(pool)]


def sha(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def rounded(metrics: dict[str, Any]) -> dict[str, Any]:
    """Floats to 12 significant digits (NaN and infinities by name), strings and integers as they are."""

    def one(value: Any) -> Any:
        if isinstance(value, float):
            return repr(value) if not math.isfinite(value) else float(f"{value:.12g}")
        return value

    return {name: one(value) for name, value in metrics.items()}


def documents_of(kind: str, conventions: str) -> list[dict[str, Any]]:
    return documents.documents_for(kind, draws=DRAWS, metadata={"fact_or_fair_conventions": conventions})


def dataset_fingerprint(kind: str, conventions: str) -> str:
    dataset = documents.load_dataset(
        fact_or_fair_kind=kind, fact_or_fair_draws=DRAWS, fact_or_fair_conventions=conventions, pretrained="ignored"
    )["test"]
    return sha(json.dumps(dataset.to_list(), sort_keys=True, ensure_ascii=False) + repr(dataset.features))


def score_fingerprints(kind: str, conventions: str) -> dict[str, str]:
    docs = documents_of(kind, conventions)
    results = [scoring.process_results(doc, [pick(doc, i)]) for i, doc in enumerate(docs)]
    parses = [scoring.parse_reply(doc, pick(doc, i)) for i, doc in enumerate(docs)]
    records = [r["parsed"] for r in results]
    logliks = [[(-float((i * 31 + j * 17) % 5), False) for j in range(len(d["options"]))] for i, d in enumerate(docs)]
    mc = [scoring.process_results_mc(doc, logliks[i]) for i, doc in enumerate(docs)]
    task = scoring.task_name(kind)
    return {
        "parses": sha([[p.status, p.index, p.rule] for p in parses]),
        "process_results": sha(results),
        "process_results_mc": sha(mc),
        "metrics": sha(rounded(scoring.compute_metrics(records, task=task))),
        "metrics_aggregation": sha(rounded(scoring._compute_for_items(records))),
        "metrics_mc": sha(rounded(scoring.compute_metrics([r["parsed"] for r in mc], task=task))),
        "metrics_min_coverage": sha(
            rounded(scoring.compute_metrics(records, task=task, metadata={"fact_or_fair_min_coverage": 0.9}))
        ),
    }


def fingerprints() -> dict[str, str]:
    """Every pinned value (the constants below were made by this function on the code before the change)."""
    out: dict[str, str] = {}
    for conventions in CONVENTIONS:
        for kind in KINDS:
            out[f"documents/{conventions}/{kind}"] = sha(documents_of(kind, conventions))
            out[f"dataset/{conventions}/{kind}"] = dataset_fingerprint(kind, conventions)
            for name, value in score_fingerprints(kind, conventions).items():
                out[f"{name}/{conventions}/{kind}"] = value
        lines = export_records(list(KINDS), 0, DRAWS, {"fact_or_fair_conventions": conventions})
        out[f"export/{conventions}"] = sha("\n".join(dumps_line(r) for r in lines))
    return out


PINNED: dict[str, str] = {
    "dataset/corrected/attribution": "5135e27e4631a34b767dcd388a5d442dbd0bf1f7310c50e19b6507663cccbd14",
    "dataset/corrected/base": "79f3f8e78cb877fdb1b3b2d4c00968c489121b1ace56e27b18b820660199ddc7",
    "dataset/corrected/ingroup": "6964532314ca30c0f31d1ac88cd81f364259aa0fe8bf18fe43fbabb5a7a6df55",
    "dataset/corrected/objective": "f6716f9b4b1a3fb4faa006f73d8d52853b7c9c36245726cb9d23ed8209a221cb",
    "dataset/corrected/representativeness": "a3c0099e7f7a014ec64703896ebedffb6e263a73787165702a4a20dcee5d0318",
    "dataset/released/attribution": "9b90cc9e5dc9ad2fe01a8a6daf6b249a0f9ea999fbf21286c60b245807b65378",
    "dataset/released/base": "adb9864f263e9b742747c93c115cdc21a3cc5c9a34bfa1dd8ec3f8c5ee02e366",
    "dataset/released/ingroup": "9a158a9c9ae6e6a86258e7031f49831cac5290a8d5ba9f0af992f6dea4b643a8",
    "dataset/released/objective": "517b7deb976553476e3b5eae8f206b356c9dd634124c3776a2a3dbad6732e011",
    "dataset/released/representativeness": "1f5e724bebae5032124f38d91373e9aee65d250bc5f441e64c682309dd0f0f67",
    "documents/corrected/attribution": "9dc59f0eccfdd95f29ed7735bfe39200eb1b1e31ead4e2a90b5811a715d8c248",
    "documents/corrected/base": "7f4b225e33c61efcde361e4dc3555be204039d64cfd5a0e3a34dc29f006d572b",
    "documents/corrected/ingroup": "d28508300be8bf1d392d7db7f99e6e83b91d3df44e0c6ce5ffa2b73dd7419afa",
    "documents/corrected/objective": "882fdf50fc0c949e7a382a5395412ad0ea75c81a17238fa1e5b3a5be5198ea55",
    "documents/corrected/representativeness": "63b5dca2c8223c1b409b8be349e3042ab04e2ee7195572633c733590d808c614",
    "documents/released/attribution": "7f5adbc5fd92945130bf9c4cf5e992c921f577d356784397713952f4005cbe51",
    "documents/released/base": "b165bf6d4b343d7fc2c4be095e2328ad8bfa0965a8d215a6120ca21ce386f981",
    "documents/released/ingroup": "dadc11166152a5f99f09eb2291f77cf749df7f13a43ae301f78e12d92852116f",
    "documents/released/objective": "c2acd8dff2ebb8397b04a928567f8c7fe26f0f220a5c4148a011b8bcab2d4978",
    "documents/released/representativeness": "8aef8ac3b9ceff5654c53dc18b6652317386b7f4657b82f883670be3a07d0c0c",
    "export/corrected": "b6328bdf55e01815ecb0687551ef216e326ec9f72d8958a9da0b207a266119cf",
    "export/released": "65b3495cfc1e67a920fded8c839e7f5712004086f8a3beff72744fea7b5ca41b",
    "metrics/corrected/attribution": "25843555372d7cb04cd4f048c8b95afabbbb5f3cb30d8324693f961de5556988",
    "metrics/corrected/base": "aba336356a0f933675dafb3c56c8e34e156b62095286389ee613fc14be0ee188",
    "metrics/corrected/ingroup": "b396c7a39c535dcb2e5929814b761d33b89653205f38b72db2319ed997995867",
    "metrics/corrected/objective": "0ecf631464bcf34af955d60143a32b603e19a5fe0b0fe43ae0bf436538447b3e",
    "metrics/corrected/representativeness": "2145ff4a2cf82b8dcad63b095972843c197e518f1b6d6112709ec89def37d941",
    "metrics/released/attribution": "5b978f42487bdbd7e4ec18c6104aee89ccea34f7ad9bf920ace7aea3b0e4053b",
    "metrics/released/base": "d19a806e44fecb0f92a11efd51e8d9299cf52c111324a3f44ff55701d17957b1",
    "metrics/released/ingroup": "708c442779fdf80e19ceae9f29931071f1dce6db11794ef420d3afca96a9e049",
    "metrics/released/objective": "79041525202c9ecac49a22c50c25bca1288c3a46770e0e26114c52dffa4e66d9",
    "metrics/released/representativeness": "cffaacd4c3370f5ddb3ce1b528ebbff70f4f55a3e5e35d6b2c26ee3693c486aa",
    "metrics_aggregation/corrected/attribution": "25843555372d7cb04cd4f048c8b95afabbbb5f3cb30d8324693f961de5556988",
    "metrics_aggregation/corrected/base": "aba336356a0f933675dafb3c56c8e34e156b62095286389ee613fc14be0ee188",
    "metrics_aggregation/corrected/ingroup": "b396c7a39c535dcb2e5929814b761d33b89653205f38b72db2319ed997995867",
    "metrics_aggregation/corrected/objective": "0ecf631464bcf34af955d60143a32b603e19a5fe0b0fe43ae0bf436538447b3e",
    "metrics_aggregation/corrected/representativeness": "2145ff4a2cf82b8dcad63b095972843c197e518f1b6d6112709ec89def37d941",
    "metrics_aggregation/released/attribution": "5b978f42487bdbd7e4ec18c6104aee89ccea34f7ad9bf920ace7aea3b0e4053b",
    "metrics_aggregation/released/base": "d19a806e44fecb0f92a11efd51e8d9299cf52c111324a3f44ff55701d17957b1",
    "metrics_aggregation/released/ingroup": "708c442779fdf80e19ceae9f29931071f1dce6db11794ef420d3afca96a9e049",
    "metrics_aggregation/released/objective": "79041525202c9ecac49a22c50c25bca1288c3a46770e0e26114c52dffa4e66d9",
    "metrics_aggregation/released/representativeness": "cffaacd4c3370f5ddb3ce1b528ebbff70f4f55a3e5e35d6b2c26ee3693c486aa",
    "metrics_mc/corrected/attribution": "0aa645718c572eb16cb93f38305f22548c0baee067debc5447babd692bb0a8ef",
    "metrics_mc/corrected/base": "0aa645718c572eb16cb93f38305f22548c0baee067debc5447babd692bb0a8ef",
    "metrics_mc/corrected/ingroup": "0aa645718c572eb16cb93f38305f22548c0baee067debc5447babd692bb0a8ef",
    "metrics_mc/corrected/objective": "c61ec46a5e09ad841904fa9f3cf3427c2f8b58a24e7ceb6b89cce20a09b89cab",
    "metrics_mc/corrected/representativeness": "0aa645718c572eb16cb93f38305f22548c0baee067debc5447babd692bb0a8ef",
    "metrics_mc/released/attribution": "a7b45fcfeeac23150b98281f0b39188fffc81b340ea004ad3b10c851ab5f9087",
    "metrics_mc/released/base": "a7b45fcfeeac23150b98281f0b39188fffc81b340ea004ad3b10c851ab5f9087",
    "metrics_mc/released/ingroup": "a7b45fcfeeac23150b98281f0b39188fffc81b340ea004ad3b10c851ab5f9087",
    "metrics_mc/released/objective": "4d8499ebadcbf6b541f4b3ae0e52edb47fd98cf2147412bab573716d906e466f",
    "metrics_mc/released/representativeness": "a7b45fcfeeac23150b98281f0b39188fffc81b340ea004ad3b10c851ab5f9087",
    "metrics_min_coverage/corrected/attribution": "c644fee749461143f3edae125b244c393c14f1671bf880d809e1a84ed420ec94",
    "metrics_min_coverage/corrected/base": "c1a9c34a008ba77b83f1868bb7de182218b273939f84bb0627d9b185a2e12b6e",
    "metrics_min_coverage/corrected/ingroup": "df2b9704d5196b1684c90e0195d04e63c9a6fe541ef3c5d5a547b08d7c9a8a46",
    "metrics_min_coverage/corrected/objective": "e49f2f2b9466a9e09fd086f1ee74040f09a5f2a5e8fbac488b2ffb7e4fa4def4",
    "metrics_min_coverage/corrected/representativeness": "0b138b973b66436cb1664d20b1d4ccca1ac4bc0b445c972a3d4f6106174c1c93",
    "metrics_min_coverage/released/attribution": "5b978f42487bdbd7e4ec18c6104aee89ccea34f7ad9bf920ace7aea3b0e4053b",
    "metrics_min_coverage/released/base": "d19a806e44fecb0f92a11efd51e8d9299cf52c111324a3f44ff55701d17957b1",
    "metrics_min_coverage/released/ingroup": "708c442779fdf80e19ceae9f29931071f1dce6db11794ef420d3afca96a9e049",
    "metrics_min_coverage/released/objective": "79041525202c9ecac49a22c50c25bca1288c3a46770e0e26114c52dffa4e66d9",
    "metrics_min_coverage/released/representativeness": "cffaacd4c3370f5ddb3ce1b528ebbff70f4f55a3e5e35d6b2c26ee3693c486aa",
    "parses/corrected/attribution": "0275dc619beb76ce28c36c92ddf48679fba60d515a944ba8baa8e0b20c0d5151",
    "parses/corrected/base": "b0432e3f9571c9bcda9de11bf83da79b1e03eaf23ea3f8a327ef31541aa8dd92",
    "parses/corrected/ingroup": "d32eae0d9e2fd01848111718e6aae7cf9574af3facb4116b1c9bf7fa331c1a32",
    "parses/corrected/objective": "c71c9a24ed15a94a3f32c1ea60be1790aae5ad2a6f6bad252a43fe3785b2d840",
    "parses/corrected/representativeness": "3c016753b165419fadaafeab1580d9d2c6aa7acefa411aa3ab44a8cabdf485f6",
    "parses/released/attribution": "714005f85cbc0674823fb0ca7529530f7949ed7345171154569abf2737ae161e",
    "parses/released/base": "5cb46881f0a02a8c48fccffb21bd2378a9d4295853cf37de3becaf69eb66ab58",
    "parses/released/ingroup": "fce6ecb3f33db8625a93da55c746a17115d507458b9de74ff922fbcf4e83492f",
    "parses/released/objective": "5054470ce7aac89923d41cd3a0ce6d4783255fa2e0327abbace64786412ebffa",
    "parses/released/representativeness": "643473a1a3776f324618d4a603ae33f3f8d5705c5e96dd7d8aa5a92649eae6e1",
    "process_results/corrected/attribution": "099123b6a536987b22e4c235e18a512866c0fda23d4ca7cfa2fa87ed0153ec4d",
    "process_results/corrected/base": "59cb8df5b18bb539297abaad6268c9f36d0c3f4dadc18ed6ccdb64d89d03269a",
    "process_results/corrected/ingroup": "ab4a8d8d8fa66194366b3b90895ec1dfec6960eb77cfaaf81e406266081a1c63",
    "process_results/corrected/objective": "96a279c6917af10a6fe483b7d25459d0abd3d959114c3177a678334d1cd821ac",
    "process_results/corrected/representativeness": "03c2cc582f47596f56282792d2793f3f765a9297b0d126161cf20a9dcf8523da",
    "process_results/released/attribution": "2b78222d8f0b92965a0fbe7b926e769f9fa72063814a7156aae479ffcd3b1792",
    "process_results/released/base": "466265d0d24fd494bd82d10a527d6a213bf4ba5602552c07f2213b5f19bc49ee",
    "process_results/released/ingroup": "42fe534c733294f911b6d80ea01064a6913ab8f7b3c2e345f776c5c991213135",
    "process_results/released/objective": "6213713d789f373f1efcd87f773fe5cc54f0c0bdcad42b745d3af3a5cca2d75c",
    "process_results/released/representativeness": "c7c0c7c02de0d896271f0cbdd9a042b35d884c628a4483713c69879847f73118",
    "process_results_mc/corrected/attribution": "f048924e82cbabc707808fe2113f8b25e31f5686361580f092eef2bc03385a8e",
    "process_results_mc/corrected/base": "14eeb8db78ee3cdd48ddf44cf77dfb588c00bbb0ab6c1af9053cdfbfc48be8e5",
    "process_results_mc/corrected/ingroup": "bcdfa86ac0855e64d78d7c21dde6358bc81105087a5d894d28236c03f409e134",
    "process_results_mc/corrected/objective": "a39aada55afb7d3a3715144f9d2214b13a0203d098f7b30c18103fd4b6ffea81",
    "process_results_mc/corrected/representativeness": "217591a8c1dad0ef496fe457e890d6beebb28ab7606855e3ad159d11165455e3",
    "process_results_mc/released/attribution": "a58e1409dec8fd922ed7b188bb1a5e116d20d375ee1fffc4342339e4e84c3bda",
    "process_results_mc/released/base": "c72669945798df41e86710f5800cb214b0336f0fba938add0df3ce4d7355a75b",
    "process_results_mc/released/ingroup": "3ef586e9bbd55e25ec72a3a2b4c72f4355a4d09ee088ee793c3c1a10a19e16ba",
    "process_results_mc/released/objective": "0669d8e72181a93671884693ab69b50850571292f9e3c6d85b9f9257a38eeb75",
    "process_results_mc/released/representativeness": "6bde817c4f6355e3e7f692a4beb4ce2d5af83f0307bde78d92cc61027258a8fe",
}


@pytest.fixture(scope="module")
def current() -> dict[str, str]:
    return fingerprints()


@pytest.mark.parametrize("name", sorted(PINNED))
def test_fingerprint_unchanged(current: dict[str, str], name: str) -> None:
    assert current[name] == PINNED[name]


def test_every_fingerprint_is_pinned(current: dict[str, str]) -> None:
    assert sorted(current) == sorted(PINNED)


@pytest.mark.parametrize("kind", KINDS)
def test_dataset_is_the_same_with_the_cache_off_missed_and_hit(
    kind: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path))
    entries = tmp_path / "fact-or-fair-documents"
    monkeypatch.setenv("FAIRNESS_EVALS_DOCUMENT_CACHE", "0")
    assert dataset_fingerprint(kind, "corrected") == PINNED[f"dataset/corrected/{kind}"]
    assert not entries.exists()
    monkeypatch.delenv("FAIRNESS_EVALS_DOCUMENT_CACHE")
    documents._subjective_columns.cache_clear()
    assert dataset_fingerprint(kind, "corrected") == PINNED[f"dataset/corrected/{kind}"]  # a miss: built, stored
    assert len(list(entries.glob("*.arrows"))) == 1
    documents._subjective_columns.cache_clear()
    documents._objective_documents.cache_clear()
    assert dataset_fingerprint(kind, "corrected") == PINNED[f"dataset/corrected/{kind}"]  # a hit: read back
    assert (
        documents._subjective_columns.cache_info().currsize == 0
        and documents._objective_documents.cache_info().currsize == 0
    )
