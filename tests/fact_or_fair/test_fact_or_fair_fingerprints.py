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

Re-pinned once since (issues 22-23, "each statistic declared once" and compact sample logs): the documents, datasets,
exports and parses are the pins of 62d5e17, unchanged; ``process_results`` now returns the readable record under the
carrier metric and metric names elsewhere, ``letter_share_<L>`` became ``position_share_<k>`` and ``seed`` /
``documents_sha256`` left the metrics (they are provenance), so the ``process_results*`` and ``metrics*`` pins were made
again, after every metric value of every kind, convention and threshold had been compared equal (exactly, as floats)
with the code before, and the new ``records`` pins hold the integer records the aggregation reads. The documents
then lost their ``body`` and ``prompt`` fields (the prompt is built from the other fields, and the harness logs it
once) and their ``doc_sha`` now hashes their fields: the ``documents`` and ``dataset`` pins were made
again after every field of every document (both conventions, 100 draws: 91,596 documents) and every generation and
log-likelihood prompt had been compared equal with the code before; the ``export`` pins, which hold the prompts, did
not change. Then S_fact gained ``s_fact_<axis>_stderr`` (the harness's ± column): the ``metrics*`` and
``process_results*`` pins were made again after every other value had been compared equal.

Issue 33 (answers that follow the letters null the fairness scores) moved 17 ``metrics*`` pins, and in them only
``position_explained``, from 1 to 0: the fixed replies of the corrected subjective ``metrics`` (base,
representativeness, attribution; with their ``metrics_aggregation`` and ``metrics_min_coverage``) and the
log-likelihoods of every subjective ``metrics_mc`` favour letter A (38-41% of the answers, ``position_bias``
0.15-0.26), which the old position test called "answers follow the letters" and the new one, which also needs
``position_bias >= 0.3`` (``fact_fair_tasks/position_bias.py``), does not; so their scores stay. Each new value,
with ``position_explained`` set back to 1, hashes to its previous pin.

Issue 36 (each metric names its own aggregation) moved the 20 ``process_results*`` pins: a sample's metrics other
than the carrier hold ``None`` where they held their own names. Each new payload, with those values set back to the
names, hashes to its previous pin. Then the carrier's readable record left its integer ``record`` out of the log
(:class:`scoring.LoggedRecord` holds it for the aggregation; the line's document gives it again): each payload, its
``record`` put back, hashes to that pin, and :func:`scoring.logged_record` makes every document's record again from
the logged line, equal to the one the aggregation read.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest

from fact_fair_tasks import documents, scoring
from fact_fair_tasks.commands import export_records
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


#: Metric names added after the ``metrics*`` pins were made, left out of their hashes so that the pins still hold
#: every value they held (tests/fact_or_fair/test_fact_or_fair_scoring.py checks the additions): issue 33's
#: ``<score>_<axis>_ci_centre``, the value each reflected interval is centred on, and ``<name>_counted`` /
#: ``<name>_inputs``, the two counts of each ``<name>_coverage`` (the score's denominator and its inputs).
ADDED_SUFFIXES = ("_ci_centre", "_counted", "_inputs")


def pinned(metrics: dict[str, Any]) -> dict[str, Any]:
    """``metrics`` without the names added after the pins (:data:`ADDED_SUFFIXES`)."""
    return {name: value for name, value in metrics.items() if not name.endswith(ADDED_SUFFIXES)}


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
    records = [r[scoring.CARRIER].record for r in results]
    logliks = [[(-float((i * 31 + j * 17) % 5), False) for j in range(len(d["options"]))] for i, d in enumerate(docs)]
    mc = [scoring.process_results_mc(doc, logliks[i]) for i, doc in enumerate(docs)]
    task = scoring.task_name(kind)
    return {
        "parses": sha([[p.status, p.index, p.rule] for p in parses]),
        "records": sha(records),
        "process_results": sha(results),
        "process_results_mc": sha(mc),
        "metrics": sha(rounded(pinned(scoring.compute_metrics(records, task=task)))),
        "metrics_aggregation": sha(rounded(pinned(scoring._compute_for_items([r[scoring.CARRIER] for r in results])))),
        "metrics_mc": sha(rounded(pinned(scoring.compute_metrics([r[scoring.CARRIER].record for r in mc], task=task)))),
        "metrics_min_coverage": sha(
            rounded(pinned(scoring.compute_metrics(records, task=task, metadata={"fact_or_fair_min_coverage": 0.9})))
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
    "dataset/corrected/attribution": "cf58f40f10e4c2e18df06c64acf0c9d4b4d1d9612c824ea00f0bed272be87402",
    "dataset/corrected/base": "28807a73024b98bbdcfea9f6a1eb3ed39102cc0c2fc50484b5195f6ca5098793",
    "dataset/corrected/ingroup": "494dc7a0a809cc65c3c63e3b3455ba88e2e0acc8192f9e55ea1711ea3aaf3a52",
    "dataset/corrected/objective": "6549f3dc2199d85d94cf68706987fba2925eca9271bf64b78c9d1f4a3eb8f447",
    "dataset/corrected/representativeness": "03c7c709c5fb47869f1181e8cc833a6cc14a8fe9b710f5d53e666d968157578b",
    "dataset/released/attribution": "f49d5179941dd3d978a79271bad7c0d9d454db58695c492fa9fbb38c4b03bcef",
    "dataset/released/base": "3ad07f5c95e4397ad302222dbe1db8f1f13bdb1d90c483171dac2fc3da7002a5",
    "dataset/released/ingroup": "ea57c0ce19952c1eb553ce6218978d27274a4aca515366da713c93f6d63b6755",
    "dataset/released/objective": "23a665b37b45ca8dbc8d937e42861207e7914e1484ab6d2c681746ec3c54b1c8",
    "dataset/released/representativeness": "7128ef025a1c980fa6524d0ca407c1440763958b0badac7be5bd0664631b1d99",
    "documents/corrected/attribution": "1353517d7c334dbeef620a84a40388b7dee697d18b30554c68ffe2cc4f762677",
    "documents/corrected/base": "0c6f3216a79ab2fec5e6bc426f12997e0fd2fe7ae1862f3d8409a58cf44c1f6d",
    "documents/corrected/ingroup": "e714d6bd801d58b9dc2fd39da58983adc6c971c088513a3a68a09b6152343901",
    "documents/corrected/objective": "a2d345f24596649c60f81d3f2eacceedc5eb10257939d4410b104bea54cbd115",
    "documents/corrected/representativeness": "b86094517e3325a2b424c6ca975d74fb3f33e940501034a8da44940c5830bb26",
    "documents/released/attribution": "a99b222223083ca4dce835263d5c2927bb4627e2898ba71e469d9bbd70ba0ed9",
    "documents/released/base": "32891e8eec21e5600c64ad009d20eda651282eb50d34857440a9d921bdfd3c05",
    "documents/released/ingroup": "e5f50c5b6a812a4056c0a62e26cc68b1254367eaf44fab49c2e334e256bfd02f",
    "documents/released/objective": "61ee47e45016683fd6c5d3b3f647f91d1f112198b3807ce92934fa2e766de1a3",
    "documents/released/representativeness": "0b3a64acbad406b909dff6620377baf4e9c4fb5f177fee6c7363bc76e4542a51",
    "export/corrected": "b6328bdf55e01815ecb0687551ef216e326ec9f72d8958a9da0b207a266119cf",
    "export/released": "65b3495cfc1e67a920fded8c839e7f5712004086f8a3beff72744fea7b5ca41b",
    "metrics/corrected/attribution": "2049738139253bc92677c82039977fd058e61af7c31fee160ef8218306572771",
    "metrics/corrected/base": "03c3ebcaafbc6f22d966beec7474303d947f62fb74fdb4fe8f95a32e99d4c863",
    "metrics/corrected/ingroup": "578784bcb560b4662ae81a95a1d5f1f3eb4896d7bae51a940964ea2a6255086f",
    "metrics/corrected/objective": "cfec8eeae217d3a092d95c161f4fdfca9374cf9e5814b9b5cd59dbd927ceb31c",
    "metrics/corrected/representativeness": "eb6ca324a66ed8eedf19646fd721aa2f4e617bf2bbad50a8a04c377a4342e161",
    "metrics/released/attribution": "a13a3112b944e595714fe5597e87c24d2768af473b9902d70a505432b78891f7",
    "metrics/released/base": "1a02da81c68e03c41419e779fbe75397877189916838f43e3e9e046183e6e1ea",
    "metrics/released/ingroup": "1af1f5dc88115428cb64f6f51fc9ab631c157662f38526c90c659834dc549ec5",
    "metrics/released/objective": "b28f463aa55253376d1f2ba8344c0cdc02f3f5b4845c4d19519eb8b79d9fc822",
    "metrics/released/representativeness": "45292af04cd0e8d91928bc5ff2aba13f0f59d5f1394402cc3810c50d1760f5eb",
    "metrics_aggregation/corrected/attribution": "2049738139253bc92677c82039977fd058e61af7c31fee160ef8218306572771",
    "metrics_aggregation/corrected/base": "03c3ebcaafbc6f22d966beec7474303d947f62fb74fdb4fe8f95a32e99d4c863",
    "metrics_aggregation/corrected/ingroup": "578784bcb560b4662ae81a95a1d5f1f3eb4896d7bae51a940964ea2a6255086f",
    "metrics_aggregation/corrected/objective": "cfec8eeae217d3a092d95c161f4fdfca9374cf9e5814b9b5cd59dbd927ceb31c",
    "metrics_aggregation/corrected/representativeness": "eb6ca324a66ed8eedf19646fd721aa2f4e617bf2bbad50a8a04c377a4342e161",
    "metrics_aggregation/released/attribution": "a13a3112b944e595714fe5597e87c24d2768af473b9902d70a505432b78891f7",
    "metrics_aggregation/released/base": "1a02da81c68e03c41419e779fbe75397877189916838f43e3e9e046183e6e1ea",
    "metrics_aggregation/released/ingroup": "1af1f5dc88115428cb64f6f51fc9ab631c157662f38526c90c659834dc549ec5",
    "metrics_aggregation/released/objective": "b28f463aa55253376d1f2ba8344c0cdc02f3f5b4845c4d19519eb8b79d9fc822",
    "metrics_aggregation/released/representativeness": "45292af04cd0e8d91928bc5ff2aba13f0f59d5f1394402cc3810c50d1760f5eb",
    "metrics_mc/corrected/attribution": "ae298e96327ce3c929993bbc046fbc244ccf6bee63a368678f9dab6bb5b29e86",
    "metrics_mc/corrected/base": "ae298e96327ce3c929993bbc046fbc244ccf6bee63a368678f9dab6bb5b29e86",
    "metrics_mc/corrected/ingroup": "ae298e96327ce3c929993bbc046fbc244ccf6bee63a368678f9dab6bb5b29e86",
    "metrics_mc/corrected/objective": "a6d81b18d769e576a35f26db34d713ca9769241d72c6f035b50e941f59529c99",
    "metrics_mc/corrected/representativeness": "ae298e96327ce3c929993bbc046fbc244ccf6bee63a368678f9dab6bb5b29e86",
    "metrics_mc/released/attribution": "a783b32047bceac60292b68794e0ee573efc2417646cda5bd67575226cd3c783",
    "metrics_mc/released/base": "a783b32047bceac60292b68794e0ee573efc2417646cda5bd67575226cd3c783",
    "metrics_mc/released/ingroup": "a783b32047bceac60292b68794e0ee573efc2417646cda5bd67575226cd3c783",
    "metrics_mc/released/objective": "de24f395437de61c3348d2c9997419c5029d3ab6a8e56142278bdcb49762d858",
    "metrics_mc/released/representativeness": "a783b32047bceac60292b68794e0ee573efc2417646cda5bd67575226cd3c783",
    "metrics_min_coverage/corrected/attribution": "c75aad299bcefdf87e3c634479a269276af62aa608c6732379e54bd45e9d2915",
    "metrics_min_coverage/corrected/base": "df6f0b093ed47ca1bf3dc9b5dbdf5e240b9902d4fdb879c194d3490be614fc6f",
    "metrics_min_coverage/corrected/ingroup": "302cedc326762d963a459be6f2bc7610d5bf3249884e4598b0c4a4e4b8baf339",
    "metrics_min_coverage/corrected/objective": "66aabb68fb6f4a6f5f97a3a9eb252b1eed50628587649001dfa47e41137cc323",
    "metrics_min_coverage/corrected/representativeness": "9e7104f02876e52d9c557e11248a643b1e475bfe88f82a9c3eaf4fe3e6d879a7",
    "metrics_min_coverage/released/attribution": "a13a3112b944e595714fe5597e87c24d2768af473b9902d70a505432b78891f7",
    "metrics_min_coverage/released/base": "1a02da81c68e03c41419e779fbe75397877189916838f43e3e9e046183e6e1ea",
    "metrics_min_coverage/released/ingroup": "1af1f5dc88115428cb64f6f51fc9ab631c157662f38526c90c659834dc549ec5",
    "metrics_min_coverage/released/objective": "b28f463aa55253376d1f2ba8344c0cdc02f3f5b4845c4d19519eb8b79d9fc822",
    "metrics_min_coverage/released/representativeness": "45292af04cd0e8d91928bc5ff2aba13f0f59d5f1394402cc3810c50d1760f5eb",
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
    "process_results/corrected/attribution": "ab7b67232186e494908cb69f25c7bf1906a4f0d6145ddd11b6b208e4d7f2d5d3",
    "process_results/corrected/base": "66a6de0a04b6227de3fcdc1326a321e52c6cd76ed401fe469873ddcaa940da11",
    "process_results/corrected/ingroup": "02737058164c119649d59bf13d23ef403e33535b962324d4c17d721feb0549bd",
    "process_results/corrected/objective": "3737bd24fe314c3eadb77e27b921fad9074499ae369c46c2945c0b79bf3acf93",
    "process_results/corrected/representativeness": "4ca9fe5963dd810e6336d1b705256c9eae9c73fbd86ff7e23466f1ddacde65bf",
    "process_results/released/attribution": "efea3cad97f8482d3ce8198c049edbcb2508d177f9bef42a1ef4b18bd4bbed83",
    "process_results/released/base": "1012c6cb79a64176159bd83720e78380eaed663c83ba3fd7e75c4e4a35ac9e7a",
    "process_results/released/ingroup": "2997cacd0df806389800b4c0a8d4397d45d9b79836a65abee3cf2e84cd128e66",
    "process_results/released/objective": "feab2c387a1dd8f9f91c26e1e9a25adf3104e1957ee748c862b7b76bccaa0c2a",
    "process_results/released/representativeness": "b0d8cda7b4579c3e72e16cf675b47999fa6482b45f38e4c435685de4d3d3477b",
    "process_results_mc/corrected/attribution": "038bf99c5a3d1b7683250a667f5fc0c4cf64599559a132aca5218e0e44789abb",
    "process_results_mc/corrected/base": "038bf99c5a3d1b7683250a667f5fc0c4cf64599559a132aca5218e0e44789abb",
    "process_results_mc/corrected/ingroup": "038bf99c5a3d1b7683250a667f5fc0c4cf64599559a132aca5218e0e44789abb",
    "process_results_mc/corrected/objective": "afa96327a9107d8e12b0604c11fb9b99e3a3fd80a817cac60a670dd9a9094a59",
    "process_results_mc/corrected/representativeness": "038bf99c5a3d1b7683250a667f5fc0c4cf64599559a132aca5218e0e44789abb",
    "process_results_mc/released/attribution": "038bf99c5a3d1b7683250a667f5fc0c4cf64599559a132aca5218e0e44789abb",
    "process_results_mc/released/base": "038bf99c5a3d1b7683250a667f5fc0c4cf64599559a132aca5218e0e44789abb",
    "process_results_mc/released/ingroup": "038bf99c5a3d1b7683250a667f5fc0c4cf64599559a132aca5218e0e44789abb",
    "process_results_mc/released/objective": "029f1f57eacc8b042d1768de5388259eea5201eda5e8c536accb9661dcc2c47b",
    "process_results_mc/released/representativeness": "038bf99c5a3d1b7683250a667f5fc0c4cf64599559a132aca5218e0e44789abb",
    "records/corrected/attribution": "9b42537ecb79ead0d879788393ce9d185f02104df6c93966029692b146f3a90e",
    "records/corrected/base": "e2456189f0a0eb4b78633b251e1d406e3d7a62abe6610c10251eec027c91cef8",
    "records/corrected/ingroup": "5ef57fd5071db0c5477e5418c2477c6c43fdae868d0df483fd7ca8d8e01297a4",
    "records/corrected/objective": "499a633939e96ef01cc8c2f4c5f1d486c6c3fd116ccdea2fe3f2c9295241183f",
    "records/corrected/representativeness": "790f626c1ccdb5ac0dc550eb11f1a5c2f464cfaddb4a5620b9ffe7fcb5b10096",
    "records/released/attribution": "be54063bb265525bbbd315fda472c0f77165f01549e60611098113e58ee0da27",
    "records/released/base": "7c42dd16aa067356b16a7c66f6895ee5a876c4c0c04f0a1ea30af04265d9cb41",
    "records/released/ingroup": "3d92ae826d6c3c6de499dee751a2c6d2643bd14b2dc2705b5dc02f068c9dcd26",
    "records/released/objective": "058f2ccdbed58cca8d1ef8a3ff8ade40624576ea0a68f42929ee5e1c3f2138ef",
    "records/released/representativeness": "03d5a742e9b0852e173f11a65cea7274379d15afadc4cfa71318ed13f289e175",
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
    documents._subjective_documents.cache_clear()
    assert dataset_fingerprint(kind, "corrected") == PINNED[f"dataset/corrected/{kind}"]  # a miss: built, stored
    assert len(list(entries.glob("*.arrows"))) == 1
    documents._subjective_documents.cache_clear()
    documents._objective_documents.cache_clear()
    assert dataset_fingerprint(kind, "corrected") == PINNED[f"dataset/corrected/{kind}"]  # a hit: read back
    assert (
        documents._subjective_documents.cache_info().currsize == 0
        and documents._objective_documents.cache_info().currsize == 0
    )
