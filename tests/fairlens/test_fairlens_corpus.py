"""Each corpus kind on small fixtures, the accounting, and every kind of bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from faces import (
    corrupt,
    make_hf_dataset,
    make_utkface_folder,
    manifest_rows_for,
    real_photo,
    write_jpeg,
    write_manifest,
)

from fairlens_tasks.corpus import CorpusError, load_corpus
from fairlens_tasks.documents import documents
from fairlens_tasks.labels import AGE_BANDS, GENDERS, RACES
from fairlens_tasks.settings import CLI, ENV, SettingsError, build_settings, settings_from_env
from fairness_evals.corpus.sources import IMAGE_SUFFIXES


def _settings(corpus: Path | str, **values: object):
    return build_settings({"corpus": str(corpus), **values}, ENV)


def _accounting_holds(corpus) -> None:
    assert corpus.found == corpus.loaded + corpus.skipped + corpus.duplicates
    assert corpus.sampled == len(corpus.images) <= corpus.eligible <= corpus.loaded
    assert [image.unit for image in corpus.images] == list(range(corpus.sampled))


def _all_groups(corpus) -> dict[str, set[str]]:
    images = [i.entry.demographics for i in corpus.images]
    return {"gender": {d.gender for d in images}, "race": {d.race for d in images}, "age": {d.age_band for d in images}}


# --------------------------------------------------------------------------- UTKFace folder
def test_utkface_folder_filters_ages_and_samples(utk_folder: Path) -> None:
    corpus = load_corpus(_settings(utk_folder, sample_fraction=0.5))
    assert corpus.kind == "utkface"
    assert (corpus.found, corpus.loaded, corpus.skipped, corpus.eligible) == (62, 62, 0, 60)  # 20 and 70 dropped
    assert corpus.sampled == 30  # one of the two images of each of the 30 strata
    assert all(25 <= i.entry.demographics.age <= 65 for i in corpus.images)
    assert _all_groups(corpus) == {"gender": set(GENDERS), "race": set(RACES), "age": set(AGE_BANDS)}
    _accounting_holds(corpus)


def test_default_fraction_is_ten_percent_with_every_stratum_kept(utk_folder: Path) -> None:
    corpus = load_corpus(_settings(utk_folder))
    assert corpus.settings.sample_fraction == 0.1
    assert corpus.sampled == 30  # 60 eligible: 10% is 6, but each of the 30 strata keeps one image


def test_same_settings_same_corpus_and_fingerprint(utk_folder: Path) -> None:
    a = load_corpus(_settings(utk_folder, sample_fraction=0.5, seed=3))
    b = load_corpus(_settings(utk_folder, sample_fraction=0.5, seed=3))
    c = load_corpus(_settings(utk_folder, sample_fraction=0.5, seed=4))
    assert [i.entry.image_id for i in a.images] == [i.entry.image_id for i in b.images]
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert len(a.fingerprint) == 16


def test_nested_folders_and_non_image_files(tmp_path: Path) -> None:
    make_utkface_folder(tmp_path / "part1", 1)
    make_utkface_folder(tmp_path / "part2", 1, seed=1)
    (tmp_path / "README.txt").write_text("not an image")
    (tmp_path / "landmarks.txt").write_text("1 2 3")
    corpus = load_corpus(_settings(tmp_path, sample_fraction=1))
    assert corpus.found == 60 and corpus.sampled == 60
    assert {i.entry.image_id.split("/")[0] for i in corpus.images} == {"part1", "part2"}
    assert ".jpg" in IMAGE_SUFFIXES


def test_image_list_uses_exactly_those_images(utk_folder: Path, tmp_path: Path) -> None:
    names = sorted(p.name for p in utk_folder.iterdir())
    chosen = [n for n in names if not n.startswith(("20_", "70_"))][::2]
    listing = tmp_path / "images_metadata.json"
    listing.write_text(json.dumps([{"filename": n, "split": "test"} for n in chosen]))
    corpus = load_corpus(_settings(utk_folder, image_list=str(listing), sample_fraction=0.1))
    assert [i.entry.image_id for i in corpus.images] == chosen  # list order, no sampling, no filter
    assert corpus.from_list and corpus.provenance()["sample_fraction"] == 1.0


@pytest.mark.parametrize(
    "entry", ["../outside/{name}", "{root}/../outside/{name}", "/etc/hostname", "sub/../../outside/{name}"]
)
def test_image_list_entries_outside_the_corpus_folder_are_rejected(tmp_path: Path, entry: str) -> None:
    """Review item 10: ``../`` and absolute entries reached outside the corpus root (or failed unnamed)."""
    root = tmp_path / "root"
    paths = make_utkface_folder(root, 1)
    outside = tmp_path / "outside" / paths[0].name
    outside.parent.mkdir()
    shutil.copy(paths[0], outside)
    text = entry.format(name=paths[0].name, root=root)
    listing = tmp_path / "images_metadata.json"
    listing.write_text(json.dumps([p.name for p in paths[1:]] + [text]))
    with pytest.raises(CorpusError, match=rf"entry 30 \({text}\): names a file outside the corpus folder"):
        load_corpus(_settings(root, image_list=str(listing)))


def test_image_list_entry_linking_outside_the_corpus_folder_is_rejected(tmp_path: Path) -> None:
    root = tmp_path / "root"
    paths = make_utkface_folder(root, 1)
    target = write_jpeg(tmp_path / "secret" / "25_0_0_20170101000009999.jpg.chip.jpg", 7)
    (root / "link.jpg").symlink_to(target)
    listing = tmp_path / "images_metadata.json"
    listing.write_text(json.dumps([p.name for p in paths] + ["link.jpg"]))
    with pytest.raises(CorpusError, match=r"entry 31 \(link.jpg\): names a file outside the corpus folder"):
        load_corpus(_settings(root, image_list=str(listing)))


def test_image_list_entry_without_a_file_is_named(utk_folder: Path, tmp_path: Path) -> None:
    listing = tmp_path / "images_metadata.json"
    names = sorted(p.name for p in utk_folder.iterdir())
    listing.write_text(json.dumps([*names, "99_0_0_20170101000000999.jpg.chip.jpg"]))
    with pytest.raises(CorpusError, match=r"entry 63 \(99_0_0_20170101000000999.jpg.chip.jpg\): no such image"):
        load_corpus(_settings(utk_folder, image_list=str(listing)))


# --------------------------------------------------------------------------- manifests
@pytest.mark.parametrize("suffix", ["csv", "jsonl", "json"])
def test_manifest_kinds(utk_folder: Path, tmp_path: Path, suffix: str) -> None:
    paths = sorted(utk_folder.iterdir())
    rows = manifest_rows_for(utk_folder, paths)
    manifest = write_manifest(tmp_path / f"faces.{suffix}", rows)
    corpus = load_corpus(_settings(manifest, sample_fraction=1))
    assert corpus.kind == "manifest"
    assert (corpus.found, corpus.eligible, corpus.sampled) == (62, 60, 60)
    assert dict(corpus.images[0].entry.attributes) == {"camera": "synthetic"}
    docs = documents(corpus.settings, "healthcare")
    assert json.loads(docs[0]["attributes"]) == {"camera": "synthetic"}


def test_manifest_paths_are_relative_to_the_manifest(utk_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "images"
    shutil.copytree(utk_folder, folder)
    rows = manifest_rows_for(folder, sorted(folder.iterdir()), relative_to=tmp_path)
    manifest = write_manifest(tmp_path / "faces.csv", rows)
    corpus = load_corpus(_settings(manifest, sample_fraction=1))
    assert corpus.images[0].entry.image_id.startswith("images/")
    assert Path(corpus.images[0].entry.path).is_file()


def test_manifest_with_a_real_photo(utk_folder: Path, tmp_path: Path) -> None:
    photo = real_photo()
    rows = manifest_rows_for(utk_folder, sorted(utk_folder.iterdir()))
    rows.append({"path": str(photo), "gender": "Female", "race": "Asian", "age": 45, "camera": "real"})
    corpus = load_corpus(_settings(write_manifest(tmp_path / "faces.csv", rows), sample_fraction=1))
    real = [i for i in corpus.images if i.entry.path == str(photo)]
    assert len(real) == 1 and dict(real[0].entry.attributes) == {"camera": "real"}


def test_manifest_row_with_a_missing_label_is_named(utk_folder: Path, tmp_path: Path) -> None:
    rows = manifest_rows_for(utk_folder, sorted(utk_folder.iterdir()))
    rows[4]["race"] = ""
    rows[9]["gender"] = "robot"
    manifest = write_manifest(tmp_path / "faces.csv", rows)
    with pytest.raises(CorpusError) as info:
        load_corpus(_settings(manifest, sample_fraction=1))
    message = str(info.value)
    assert "faces.csv line 6" in message and "missing race" in message
    assert "faces.csv line 11" in message and "'robot'" in message
    assert "FAIRLENS_ON_BAD_INPUT=skip" in message
    corpus = load_corpus(_settings(manifest, sample_fraction=1, on_bad_input="skip"))
    assert (corpus.found, corpus.loaded, corpus.skipped) == (62, 60, 2)
    _accounting_holds(corpus)


def test_manifest_without_a_label_column_is_a_settings_error(tmp_path: Path) -> None:
    manifest = tmp_path / "faces.csv"
    manifest.write_text("path,gender,age\na.jpg,male,30\n")
    with pytest.raises(SettingsError, match="has no race column"):
        load_corpus(_settings(manifest))


# --------------------------------------------------------------------------- Hugging Face datasets
@pytest.mark.parametrize("save", ["disk", "parquet"])
def test_hf_dataset_with_mapped_columns(utk_folder: Path, tmp_path: Path, save: str) -> None:
    dataset = make_hf_dataset(tmp_path / "ds", sorted(utk_folder.iterdir()), save=save)
    settings = _settings(f"hf:{dataset}", sample_fraction=1, hf_columns="image=img,gender=sex,race=ethnicity,age=years")
    corpus = load_corpus(settings)
    assert corpus.kind == "hf"
    assert (corpus.found, corpus.eligible, corpus.sampled) == (62, 60, 60)
    docs = documents(settings, "legal")
    assert docs[0]["image"] == "" and docs[0]["image_index"] >= 0 and docs[0]["hf_dataset"] == str(dataset)
    from fairlens_tasks.scoring import doc_to_visual

    (image,) = doc_to_visual(docs[0])
    assert image.mode == "RGB" and image.size == (48, 48)


def test_hf_dataset_missing_columns_are_named(utk_folder: Path, tmp_path: Path) -> None:
    dataset = make_hf_dataset(tmp_path / "ds", sorted(utk_folder.iterdir())[:5])
    with pytest.raises(SettingsError, match=r"lacks the column\(s\) image=image, gender=gender.*FAIRLENS_HF_COLUMNS"):
        load_corpus(_settings(f"hf:{dataset}"))


# --------------------------------------------------------------------------- bad input
def test_corrupt_image_stops_the_run_or_is_skipped(tmp_path: Path) -> None:
    paths = make_utkface_folder(tmp_path, 2)
    corrupt(paths[0])
    with pytest.raises(CorpusError, match=rf"{paths[0].name}: not a readable image"):
        load_corpus(_settings(tmp_path, sample_fraction=1))
    corpus = load_corpus(_settings(tmp_path, sample_fraction=1, on_bad_input="skip"))
    assert (corpus.found, corpus.loaded, corpus.skipped, corpus.sampled) == (60, 59, 1, 59)
    _accounting_holds(corpus)


@pytest.mark.parametrize("seed", range(6))
def test_a_corrupt_image_is_reported_whatever_the_seed_and_its_stratum_keeps_its_size(
    tmp_path: Path, seed: int
) -> None:
    """Review m1: a sampled corrupt image used to leave its stratum short (even empty), and an unsampled one was
    never reported. Now every eligible image is checked and the draw takes readable images only."""
    paths = make_utkface_folder(tmp_path, 3)  # 3 per stratum: 10% keeps 1 per stratum
    corrupt(paths[0])  # stratum (Male, White, young)
    with pytest.raises(CorpusError, match=rf"{paths[0].name}: not a readable image"):
        load_corpus(_settings(tmp_path, seed=seed))
    corpus = load_corpus(_settings(tmp_path, seed=seed, on_bad_input="skip"))
    assert corpus.skipped == 1 and corpus.problems[0].startswith(paths[0].name)
    assert corpus.sampled == 30 and corpus.groups_empty == 0  # the stratum's draw took one of its 2 readable images
    strata = {
        (i.entry.demographics.gender, i.entry.demographics.race, i.entry.demographics.age_band) for i in corpus.images
    }
    assert len(strata) == 30 and paths[0].name not in {i.entry.image_id for i in corpus.images}
    _accounting_holds(corpus)


def test_the_same_image_under_two_folders_is_evaluated_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Review m2: the UTKFace download has UTKFace/ and crop_part1/ with overlapping files."""
    paths = make_utkface_folder(tmp_path / "UTKFace", 2)
    (tmp_path / "crop_part1").mkdir()
    for path in paths[:18]:
        shutil.copy(path, tmp_path / "crop_part1" / path.name)
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        corpus = load_corpus(_settings(tmp_path, sample_fraction=1))
    assert (corpus.found, corpus.duplicates, corpus.loaded, corpus.eligible, corpus.sampled) == (78, 18, 60, 60, 60)
    ids = [i.entry.image_id for i in corpus.images]
    assert all(i.startswith("UTKFace/") for i in ids) and len({i.sha256 for i in corpus.images}) == 60
    assert corpus.provenance()["images_duplicate"] == 18
    assert f"crop_part1/{paths[0].name} = UTKFace/{paths[0].name}" in caplog.text and "18 image(s)" in caplog.text
    _accounting_holds(corpus)
    docs = documents(_settings(tmp_path, sample_fraction=1), "legal")
    assert len(docs) == 60 * 9 and docs[0]["images_duplicate"] == 18


def test_the_same_image_with_other_labels_is_bad_input(tmp_path: Path) -> None:
    paths = make_utkface_folder(tmp_path, 1)
    renamed = tmp_path / "other" / ("60_1_4_" + paths[0].name.split("_", 3)[3])
    renamed.parent.mkdir()
    shutil.copy(paths[0], renamed)
    with pytest.raises(
        CorpusError, match=rf"other/{renamed.name}: the same image as {paths[0].name} with other labels"
    ):
        load_corpus(_settings(tmp_path, sample_fraction=1))
    corpus = load_corpus(_settings(tmp_path, sample_fraction=1, on_bad_input="skip"))
    assert (corpus.skipped, corpus.duplicates, corpus.sampled) == (1, 0, 30)


def test_truncated_image_is_caught_even_when_pil_tolerates_truncation(tmp_path: Path) -> None:
    from PIL import ImageFile

    paths = make_utkface_folder(tmp_path, 1)
    corrupt(paths[3])
    ImageFile.LOAD_TRUNCATED_IMAGES = True  # what importing lmms_eval.api.task does
    try:
        with pytest.raises(CorpusError, match=paths[3].name):
            load_corpus(_settings(tmp_path, sample_fraction=1))
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = False


def test_file_names_that_do_not_parse(tmp_path: Path) -> None:
    make_utkface_folder(tmp_path, 1)
    write_jpeg(tmp_path / "39_1_20170116174525125.jpg.chip.jpg", 1)
    write_jpeg(tmp_path / "holiday.png", 2)
    with pytest.raises(CorpusError) as info:
        load_corpus(_settings(tmp_path, sample_fraction=1))
    assert "39_1_20170116174525125.jpg.chip.jpg: file name does not parse" in str(info.value)
    assert "holiday.png" in str(info.value) and "2 bad input item(s)" in str(info.value)
    corpus = load_corpus(_settings(tmp_path, sample_fraction=1, on_bad_input="skip"))
    assert (corpus.found, corpus.loaded, corpus.skipped, corpus.sampled) == (32, 30, 2, 30)


def test_empty_group_after_sampling(tmp_path: Path) -> None:
    counts = [0 if race == 4 else 1 for gender in range(2) for race in range(5) for _ in range(3)]
    make_utkface_folder(tmp_path, counts)
    with pytest.raises(CorpusError, match="race group 'Other' has no image after sampling"):
        load_corpus(_settings(tmp_path))
    corpus = load_corpus(_settings(tmp_path, on_bad_input="skip"))
    assert corpus.groups_empty == 1 and corpus.skipped == 0 and corpus.sampled == 24


def test_bad_input_message_lists_a_bounded_number_of_items(tmp_path: Path) -> None:
    make_utkface_folder(tmp_path, 1)
    for i in range(12):
        write_jpeg(tmp_path / f"bad_{i}.jpg", i)
    with pytest.raises(CorpusError, match=r"12 bad input item\(s\).*\(8\) .*; and 4 more"):
        load_corpus(_settings(tmp_path))


# --------------------------------------------------------------------------- settings
def test_no_corpus_says_how_to_configure_one() -> None:
    with pytest.raises(SettingsError, match=r"set FAIRLENS_CORPUS to a UTKFace folder.*--config"):
        settings_from_env({})


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"sample_fraction": "0"}, r"FAIRLENS_SAMPLE_FRACTION='0' must lie in \(0, 1\]"),
        ({"sample_fraction": "ten"}, "FAIRLENS_SAMPLE_FRACTION='ten' is not a number"),
        ({"seed": "-1"}, "FAIRLENS_SEED='-1' must be 0 or more"),
        ({"on_bad_input": "ignore"}, "FAIRLENS_ON_BAD_INPUT='ignore' must be 'stop' or 'skip'"),
        ({"hf_columns": "picture=img"}, "FAIRLENS_HF_COLUMNS='picture=img'"),
        ({"label_map": "{not json"}, "FAIRLENS_LABEL_MAP: not valid JSON"),
        ({"label_map": '{"religion": {}}'}, "unknown attribute 'religion'"),
    ],
)
def test_settings_errors_name_the_variable(utk_folder: Path, values: dict, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        settings_from_env({"FAIRLENS_CORPUS": str(utk_folder), **{ENV[k]: v for k, v in values.items()}})


def test_cli_names_are_used_for_cli_settings(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"--corpus=.*no such folder or file"):
        load_corpus(build_settings({"corpus": str(tmp_path / "missing")}, CLI))


def test_label_map_from_a_file(tmp_path: Path) -> None:
    make_utkface_folder(tmp_path / "f", 1)
    rows = manifest_rows_for(tmp_path / "f", sorted((tmp_path / "f").iterdir()))
    for row in rows:
        row["race"] = {"White": "Caucasian"}.get(row["race"], row["race"])
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"race": {"Caucasian": "White"}}))
    corpus = load_corpus(
        _settings(write_manifest(tmp_path / "m.jsonl", rows), sample_fraction=1, label_map=str(mapping))
    )
    assert sum(i.entry.demographics.race == "White" for i in corpus.images) == 6


# --------------------------------------------------------------------------- inputs that must not fool the scan
def test_a_file_link_out_of_the_corpus_folder_is_named_not_followed(tmp_path: Path) -> None:
    """Issue 24 item 11: the folder scan followed file links out of the corpus root (``--image-list`` refused them)."""
    root = tmp_path / "root"
    paths = make_utkface_folder(root, 1)
    secret = write_jpeg(tmp_path / "secret" / "30_1_2_20170101000009999.jpg.chip.jpg", 7)
    (root / "sub").mkdir()
    (root / "sub" / secret.name).symlink_to(secret)
    (root / "inside.jpg.chip.jpg").symlink_to(paths[0])  # a link that stays inside is no problem
    with pytest.raises(CorpusError, match=rf"sub/{secret.name}: a link to {secret}, outside the corpus folder"):
        load_corpus(_settings(root, sample_fraction=1))
    corpus = load_corpus(_settings(root, sample_fraction=1, on_bad_input="skip"))
    assert (corpus.found, corpus.skipped, corpus.sampled) == (32, 2, 30)  # the link out; "inside" has no labels
    assert secret.name not in {Path(i.entry.image_id).name for i in corpus.images}
    _accounting_holds(corpus)
    listing = tmp_path / "images_metadata.json"
    listing.write_text(json.dumps([p.name for p in paths] + [secret.name]))  # found by name, below the folder
    with pytest.raises(CorpusError, match=rf"entry 31 \({secret.name}\): names a file outside the corpus folder"):
        load_corpus(_settings(root, image_list=str(listing)))


def test_an_image_over_the_pixel_limit_is_refused_unread_in_one_line(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    """Issue 24 item 12: a 144-megapixel PNG was accepted, with PIL's raw DecompressionBombWarning on stderr."""
    from PIL import Image

    from fairness_evals.corpus.integrity import MAX_PIXELS

    make_utkface_folder(tmp_path, 1)
    big = tmp_path / "30_0_0_20170101000009999.png"
    Image.new("1", (12_000, 12_000)).save(big)  # 144,000,000 pixels in a few kilobytes
    with pytest.raises(CorpusError) as info:
        load_corpus(_settings(tmp_path, sample_fraction=1))
    assert f"{big.name}: the image is 12000x12000 = 144,000,000 pixels, over the limit of {MAX_PIXELS:,}" in str(
        info.value
    )
    assert "\n" not in str(info.value) and MAX_PIXELS == 50_000_000
    assert not [w for w in recwarn if issubclass(w.category, Image.DecompressionBombWarning)]
    corpus = load_corpus(_settings(tmp_path, sample_fraction=1, on_bad_input="skip"))
    assert (corpus.found, corpus.skipped, corpus.sampled) == (31, 1, 30)


@pytest.mark.parametrize(("size", "shown"), [((1, 1), "1x1"), ((31, 200), "31x200")])
def test_an_image_under_the_minimum_face_size_is_refused(tmp_path: Path, size: tuple[int, int], shown: str) -> None:
    """Issue 24 item 12: a 1x1 image was accepted as a face."""
    make_utkface_folder(tmp_path, 1)
    tiny = write_jpeg(tmp_path / "41_1_3_20170101000009999.jpg.chip.jpg", 5, size)
    with pytest.raises(CorpusError, match=rf"{tiny.name}: the image is {shown} pixels, smaller than the minimum"):
        load_corpus(_settings(tmp_path, sample_fraction=1))
    write_jpeg(tiny, 5, (32, 32))  # the minimum itself is a face
    assert load_corpus(_settings(tmp_path, sample_fraction=1)).sampled == 31


def _cli_error(capsys: pytest.CaptureFixture, *argv: str) -> str:
    """The one error line of ``fairness-evals ARGV`` (exit status 2)."""
    from fairness_evals.commands.main import main

    capsys.readouterr()
    assert main(list(argv)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "unexpected" not in lines[0], lines
    return lines[0]


def test_input_errors_name_the_item_in_one_line(utk_folder: Path, tmp_path: Path, capsys) -> None:
    """Issue 24 item 15: a non-UTF-8 --image-list, an hf: dataset with no rows and --label-map [1] were an
    undecoded byte, an 'unexpected IndexError' and 'neither JSON text nor ...' (though it is JSON)."""
    import datasets

    listing = tmp_path / "images_metadata.json"
    listing.write_bytes(b'["30_0_0_\xff.jpg"]')
    line = _cli_error(capsys, "export", "fairlens", "--corpus", str(utk_folder), "--image-list", str(listing))
    assert f"--image-list: {listing}:1: not UTF-8 text (byte 0xff at offset 9)" in line
    features = datasets.Features(
        {"image": datasets.Image(), **{k: datasets.Value("string") for k in ("gender", "race", "age")}}
    )
    datasets.Dataset.from_dict({k: [] for k in features}, features=features).save_to_disk(str(tmp_path / "empty"))
    line = _cli_error(capsys, "export", "fairlens", "--corpus", f"hf:{tmp_path / 'empty'}")
    assert f"--corpus=hf:{tmp_path / 'empty'} has no rows" in line
    line = _cli_error(capsys, "export", "fairlens", "--corpus", str(utk_folder), "--label-map", "[1]")
    assert "--label-map='[1]' is a JSON array; it must be an object like" in line
    with pytest.raises(SettingsError, match=r"FAIRLENS_LABEL_MAP='1' is a JSON number"):
        settings_from_env({"FAIRLENS_CORPUS": str(utk_folder), "FAIRLENS_LABEL_MAP": "1"})


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_a_manifest_that_is_not_utf8_is_named_with_its_line(utk_folder: Path, tmp_path: Path, suffix: str) -> None:
    manifest = write_manifest(tmp_path / f"faces.{suffix}", manifest_rows_for(utk_folder, sorted(utk_folder.iterdir())))
    manifest.write_bytes(manifest.read_bytes().replace(b"synthetic", b"synth\xe9tic", 3))
    with pytest.raises(SettingsError, match=rf"FAIRLENS_CORPUS: {manifest}:[12]: not UTF-8 text \(byte 0xe9"):
        load_corpus(_settings(manifest, sample_fraction=1))
