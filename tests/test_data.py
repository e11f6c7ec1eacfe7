"""Data layer: manifest, downloads, extraction, TSV parsing, knowledge graph, questions, labels, test sets."""

from __future__ import annotations

import hashlib
import http.server
import io
import logging
import tarfile
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import MIRROR, ROOT, SC, needs_mirror, tiny_kg

from kgeval.data.archive import safe_extract
from kgeval.data.download import fetch
from kgeval.data.kg import HEAD, TAIL, KnowledgeGraph, build_kg, infer_categories, read_categories
from kgeval.data.labels import read_depths, read_labels
from kgeval.data.manifest import Resource, read_manifest
from kgeval.data.questions import AnswerIndex, Questions, adopt_published_queries
from kgeval.data.testsets import TestSet, full_test, pooled_test, sample_test
from kgeval.data.tsv import iter_rows, read_triples
from kgeval.errors import ChecksumError, CorruptFileError, InputError, KgevalError

PIN = "https://example.org/repo/" + "a" * 40 + "/file.txt"


def write(path: Path, text: str, newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.replace("\n", newline).encode())
    return path


# ---- manifest ---------------------------------------------------------------------------------------------
def test_repo_manifest_equals_shared_manifest():
    ours = read_manifest(ROOT / "config/resources.tsv")
    assert len(ours) == 36
    if MIRROR is not None:
        assert ours == read_manifest(MIRROR / "MANIFEST.tsv")


@pytest.mark.parametrize("row, problem", [
    (f"x.txt\t{PIN}\t{'g' * 64}\t3", "not a lower-case hex SHA-256"),
    (f"x.txt\thttps://example.org/main/x.txt\t{'a' * 64}\t3", "not pinned to a commit"),
    (f"x.txt\t{PIN}\t{'a' * 64}", "expected 4 tab-separated fields"),
    (f"x.txt\t{PIN}\t{'a' * 64}\tthree", "size is not a non-negative integer"),
    (f"../x.txt\t{PIN}\t{'a' * 64}\t3", "unsafe mirror_path"),
])
def test_manifest_rejects_bad_rows(tmp_path, row, problem):
    path = write(tmp_path / "m.tsv", "mirror_path\turl\tsha256\tbytes\n" + row + "\n")
    with pytest.raises(InputError, match=problem) as err:
        read_manifest(path)
    assert err.value.line == 2 and str(path) in str(err.value)


# ---- downloads ----------------------------------------------------------------------------------------------
def resource_for(content: bytes, name="d/file.txt", url=PIN) -> Resource:
    return Resource(name, url, hashlib.sha256(content).hexdigest(), len(content))


def test_fetch_from_mirror_verifies_hash(tmp_path):
    content = b"a\tr\tb\n"
    write(tmp_path / "mirror/d/file.txt", content.decode())
    res = resource_for(content)
    assert fetch(res, tmp_path / "out/file.txt", mirror=tmp_path / "mirror") == "mirror"
    assert (tmp_path / "out/file.txt").read_bytes() == content


def test_fetch_wrong_hash_names_file_and_hashes_and_leaves_nothing(tmp_path):
    write(tmp_path / "mirror/d/file.txt", "tampered\n")
    res = resource_for(b"original\n")
    with pytest.raises(ChecksumError) as err:
        fetch(res, tmp_path / "out/file.txt", mirror=tmp_path / "mirror")
    msg = str(err.value)
    assert "d/file.txt" in msg and res.sha256 in msg and hashlib.sha256(b"tampered\n").hexdigest() in msg
    assert not (tmp_path / "out").exists()  # not even the folder it made for the file


def test_fetch_network_failure_falls_back_to_mirror(tmp_path):
    content = b"x\n"
    write(tmp_path / "mirror/d/file.txt", "x\n")
    res = resource_for(content, url="http://127.0.0.1:9/" + "b" * 40 + "/file.txt")  # closed port
    assert fetch(res, tmp_path / "f", mirror=tmp_path / "mirror", prefer_mirror=False, timeout=2) == "mirror"
    assert (tmp_path / "f").read_bytes() == content


def test_fetch_without_mirror_explains(tmp_path):
    res = resource_for(b"x", url="http://127.0.0.1:9/" + "b" * 40 + "/f")
    with pytest.raises(KgevalError, match="KGEVAL_MIRROR"):
        fetch(res, tmp_path / "f", mirror=None, timeout=2)
    assert not (tmp_path / "f").exists()


def test_fetch_from_url(tmp_path):
    content = b"served\n"
    write(tmp_path / "srv" / ("c" * 40) / "f.txt", content.decode())

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(tmp_path / "srv"), **k)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{'c' * 40}/f.txt"
        assert fetch(resource_for(content, url=url), tmp_path / "got") == "url"
        assert (tmp_path / "got").read_bytes() == content
    finally:
        server.shutdown()


# ---- archives -----------------------------------------------------------------------------------------------
def make_tar(path: Path, members: list[tuple[str, bytes, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if kind == b"sym":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def test_safe_extract_ok(tmp_path):
    arc = make_tar(tmp_path / "a.tar.gz", [("train.txt", b"a\tr\tb\n", b"")])
    files = safe_extract(arc, tmp_path / "out")
    assert [p.name for p in files] == ["train.txt"] and (tmp_path / "out/train.txt").read_bytes() == b"a\tr\tb\n"


@pytest.mark.parametrize("name, kind, problem", [
    ("/etc/evil.txt", b"", "absolute path"),
    ("../evil.txt", b"", "contains '..'"),
    ("sub/../../evil.txt", b"", "contains '..'"),
    ("link", b"sym", "not a regular file"),
])
def test_safe_extract_refuses_unsafe_members(tmp_path, name, kind, problem):
    arc = make_tar(tmp_path / "a.tar.gz", [("ok.txt", b"x", b""), (name, b"evil", kind)])
    with pytest.raises(InputError, match=problem):
        safe_extract(arc, tmp_path / "out")
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").rglob("*")) == []
    assert not (tmp_path / "evil.txt").exists()


# ---- TSV ------------------------------------------------------------------------------------------------------
def test_crlf_and_whitespace_normalised(tmp_path):
    p = write(tmp_path / "t.txt", "a\tr\tb \n c\tr\td\n\n", newline="\r\n")
    assert read_triples(p) == [("a", "r", "b"), ("c", "r", "d")]


def test_field_count_error_names_line(tmp_path):
    p = write(tmp_path / "t.txt", "a\tr\tb\na\tr\n")
    with pytest.raises(InputError, match=r"t.txt:2: expected 3 tab-separated fields, found 2"):
        read_triples(p)


def test_empty_field_is_an_error(tmp_path):
    p = write(tmp_path / "t.txt", "a\t \tb\n")
    with pytest.raises(InputError, match=r":1: field 2 is empty"):
        read_triples(p)


def test_duplicates_dropped_with_warning_or_refused(tmp_path, caplog):
    p = write(tmp_path / "t.txt", "a\tr\tb\na\tr\tb\n")
    with caplog.at_level(logging.WARNING):
        assert read_triples(p) == [("a", "r", "b")]
    assert "t.txt:2: duplicate of line 1" in caplog.text
    with pytest.raises(InputError, match="duplicate of line 1"):
        read_triples(p, duplicates="error")


def test_invalid_utf8_names_line(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(b"a\tr\tb\nc\t\xff\td\n")
    with pytest.raises(InputError, match=r":2: not valid UTF-8"):
        list(iter_rows(p, 3))


# ---- knowledge graph ------------------------------------------------------------------------------------------
def test_ids_cover_all_splits_in_first_appearance_order(tmp_path):
    tr = write(tmp_path / "train.txt", "a\tr\tb\nb\ts\tc\n")
    va = write(tmp_path / "valid.txt", "c\tr\ta\n")
    te = write(tmp_path / "test.txt", "a\tr\tz\n")  # z occurs only in test
    kg = build_kg("k", tr, va, te)
    assert kg.entities == ["a", "b", "c", "z"] and kg.relations == ["r", "s"]
    assert kg.splits["test"].tolist() == [[0, 0, 3]]


def test_kg_save_load_roundtrip_and_corruption(tmp_path, synth_kg):
    synth_kg.save(tmp_path / "kg.npz")
    back = KnowledgeGraph.load(tmp_path / "kg.npz")
    assert back.fingerprint() == synth_kg.fingerprint() and back.relation_category == synth_kg.relation_category
    data = (tmp_path / "kg.npz").read_bytes()
    (tmp_path / "bad.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match="bad.npz"):
        KnowledgeGraph.load(tmp_path / "bad.npz")
    # a pickle (a .npy of objects, or any pickled file): refused, and not with numpy's advice to load it unsafely
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(CorruptFileError) as err:
        KnowledgeGraph.load(tmp_path / "obj.npy")
    assert "holds pickled objects, which kgeval never loads" in str(err.value)
    assert "allow_pickle" not in str(err.value) and "unsafely" not in str(err.value)


def test_answer_index_lookup():
    kg = tiny_kg()
    idx = AnswerIndex(kg.known(), kg.num_entities, kg.num_relations)
    keys = np.array([
        (TAIL * 2 + 0) * 5 + 0,  # (a, r, ?) -> b, c, d
        (HEAD * 2 + 0) * 5 + 3,  # (?, r, d) -> c, a
        (TAIL * 2 + 1) * 5 + 4,  # (e, s, ?) -> nothing
    ])
    rows, ans = idx.lookup(keys)
    assert sorted(zip(rows.tolist(), ans.tolist())) == [(0, 1), (0, 2), (0, 3), (1, 0), (1, 2)]
    assert idx.count(keys).tolist() == [3, 2, 0]


def test_categories_inferred_by_tph_hpt():
    # r: a->b, a->c, a->d (one head, three tails: 1-N); s: b->c, d->c (N-1)
    kg = KnowledgeGraph("k", list("abcd"), ["r", "s"], {
        "train": np.array([[0, 0, 1], [0, 0, 2], [0, 0, 3], [1, 1, 2], [3, 1, 2]]),
        "valid": np.zeros((0, 3), int), "test": np.zeros((0, 3), int)})
    assert infer_categories(kg) == ["one_to_many", "many_to_one"]


def test_category_files_errors(tmp_path):
    kg = tiny_kg()
    for cat, body in [("one_to_one", "r\n"), ("one_to_many", "s\n"), ("many_to_one", ""), ("many_to_many", "r\n")]:
        write(tmp_path / f"{cat}.txt", body)
    with pytest.raises(InputError, match=r"many_to_many.txt:1: relation 'r' already in one_to_one"):
        read_categories(tmp_path, kg)
    write(tmp_path / "many_to_many.txt", "q\n")
    with pytest.raises(InputError, match="relation 'q' is not in knowledge graph"):
        read_categories(tmp_path, kg)


# ---- questions --------------------------------------------------------------------------------------------------
def test_questions_aggregate_in_published_order():
    triples = np.array([[0, 0, 1], [2, 0, 1], [0, 0, 3]])
    q = Questions.from_triples(triples, 5, 2)
    # heads: (?, r, b) [twice], (?, r, d); tails: (a, r, ?) [twice], (c, r, ?)
    assert q.qid == ["head0", "head1", "tail0", "tail1"]
    assert list(zip(q.side.tolist(), q.entity.tolist())) == [(HEAD, 1), (HEAD, 3), (TAIL, 0), (TAIL, 2)]


def test_published_queries_adopted_or_refused(tmp_path):
    kg = tiny_kg()
    q = Questions.from_triples(kg.splits["test"], kg.num_entities, kg.num_relations)
    p = write(tmp_path / "q.txt", "tail0\ta\tr\nhead1\te\ts\nhead0\td\tr\ntail1\td\ts\n")
    got = adopt_published_queries(q, p, kg)
    assert got.qid == ["tail0", "head1", "head0", "tail1"] and got.entity.tolist() == [0, 4, 3, 3]
    write(tmp_path / "q.txt", "tail0\ta\tr\nhead1\te\ts\nhead0\tb\tr\ntail1\td\ts\n")
    with pytest.raises(InputError, match=r"q.txt:3: question head0 .* is not a question of the test set"):
        adopt_published_queries(q, p, kg)


# ---- labels -----------------------------------------------------------------------------------------------------
def test_labels_stripped_and_strict(tmp_path):
    kg = tiny_kg()
    p = write(tmp_path / "ann.txt", "a\tr\tb\t N\na\tr\tc\tY \n")
    assert read_labels(p, kg) == {(0, 0, 1): (0, 1), (0, 0, 2): (1, 2)}
    for bad in ("y", "Yes", "?"):
        write(tmp_path / "ann.txt", f"a\tr\tb\tY\na\tr\tc\t{bad}\n")
        with pytest.raises(InputError, match=rf"ann.txt:2: label '{re_escape(bad)}' is not Y or N"):
            read_labels(p, kg)
    write(tmp_path / "ann.txt", "a\tr\tb\tY\na\tr\tc\t\n")
    with pytest.raises(InputError, match=r"ann.txt:2: label '' is not Y or N"):
        read_labels(p, kg)


def re_escape(s):
    import re

    return re.escape(s)


def test_labels_duplicates_warn_conflicts_fail(tmp_path, caplog):
    kg = tiny_kg()
    p = write(tmp_path / "ann.txt", "a\tr\tb\tY\na\tr\tb\tY\n")
    with caplog.at_level(logging.WARNING):
        assert len(read_labels(p, kg)) == 1
    assert "ann.txt:2: duplicate of line 1" in caplog.text
    write(tmp_path / "ann.txt", "a\tr\tb\tY\nc\tr\td\tN\na\tr\tb\tN\n")
    with pytest.raises(InputError, match=r"ann.txt:3: triple a r b is labelled N here but Y on line 1"):
        read_labels(p, kg)


def test_labels_unknown_entity_or_relation(tmp_path):
    kg = tiny_kg()
    write(tmp_path / "ann.txt", "a\tr\tb\tY\nzz\tr\tb\tN\n")
    with pytest.raises(InputError, match=r"ann.txt:2: entity 'zz' is not in knowledge graph"):
        read_labels(tmp_path / "ann.txt", kg)
    write(tmp_path / "ann.txt", "a\tq\tb\tY\n")
    with pytest.raises(InputError, match=r"ann.txt:1: relation 'q' is not in knowledge graph"):
        read_labels(tmp_path / "ann.txt", kg)


def test_depths_must_be_integers(tmp_path):
    kg = tiny_kg()
    write(tmp_path / "d.txt", "a\tr\tb\t1\na\tr\tc\tx\n")
    with pytest.raises(InputError, match=r"d.txt:2: pooling depth 'x'"):
        read_depths(tmp_path / "d.txt", kg)


# ---- test sets ----------------------------------------------------------------------------------------------------
def test_sample_test_checks_samples_file(tmp_path):
    kg = tiny_kg()
    idx = write(tmp_path / "idx.txt", "1\n")
    good = write(tmp_path / "s.txt", "d\ts\te\n")
    assert sample_test(kg, "S", idx, good).triples.tolist() == [[3, 1, 4]]
    bad = write(tmp_path / "bad.txt", "a\tr\td\n")
    with pytest.raises(InputError, match=r"bad.txt:1: triple a r d differs from test line 1"):
        sample_test(kg, "S", idx, bad)
    write(tmp_path / "idx.txt", "1\n7\n")
    with pytest.raises(InputError, match=r"idx.txt:2: index 7 is beyond the test split"):
        sample_test(kg, "S", idx, None)


def test_pooled_test_consistency(tmp_path):
    kg = tiny_kg()
    seed = full_test(kg, "S")
    ann = write(tmp_path / "ann.txt", "a\tr\td\tY\nb\tr\td\tY\ne\tr\td\tN\n")
    dep = write(tmp_path / "dep.txt", "b\tr\td\t2\ne\tr\td\t1\n")
    ts = pooled_test(kg, "SC", seed, ann, dep)
    assert ts.counts() == {"#Triples": 4, "#Positives": 3, "#Negatives": 1}
    assert ts.at_depth(1).counts() == {"#Triples": 3, "#Positives": 2, "#Negatives": 1}
    write(tmp_path / "dep.txt", "b\tr\td\t2\n")
    with pytest.raises(InputError, match=r"ann.txt:3: labelled triple is neither a seed triple nor in dep.txt"):
        pooled_test(kg, "SC", seed, ann, dep)
    write(tmp_path / "ann.txt", "a\tr\td\tN\n")
    write(tmp_path / "dep.txt", "")
    with pytest.raises(InputError, match=r"ann.txt:1: seed test triple a r d is labelled N"):
        pooled_test(kg, "SC", seed, ann, dep)


def test_testset_save_load_roundtrip(tmp_path, synth_kg, synth_dir):
    seed = sample_test(synth_kg, "S", synth_dir["sample_idxs"], synth_dir["samples"])
    ts = pooled_test(synth_kg, "SC", seed, synth_dir["annotations"], synth_dir["pooling_depth"])
    ts.save(tmp_path / "sc.tsv", synth_kg)
    back = TestSet.load(tmp_path / "sc.tsv", synth_kg)
    assert np.array_equal(back.triples, ts.triples) and np.array_equal(back.label, ts.label)
    assert np.array_equal(back.depth, ts.depth)


# ---- the published resources (needs the mirror) --------------------------------------------------------------------
@needs_mirror
def test_fb15k237_table1_and_question_counts(fb_kg, fb_files):
    assert (fb_kg.num_entities, fb_kg.num_relations) == (14541, 237)
    assert [len(fb_kg.splits[s]) for s in ("train", "valid", "test")] == [272115, 17535, 20466]
    o = full_test(fb_kg, "FB-Test-O")
    s = sample_test(fb_kg, "FB-Test-S", fb_files["sample_idxs"], fb_files["samples"])
    sc = pooled_test(fb_kg, "FB-Test-S-C", s, fb_files["annotations"], fb_files["pooling_depth"])
    assert o.counts() == {"#Triples": 20466, "#Positives": 20466, "#Negatives": 0}
    assert s.counts() == {"#Triples": 1023, "#Positives": 1023, "#Negatives": 0}
    assert sc.counts() == {"#Triples": 22492, "#Positives": 2738, "#Negatives": 19754}
    assert len(o.questions(fb_kg)) == 22850
    assert len(sc.questions(fb_kg)) == 2883
    assert len(sc.at_depth(0).questions(fb_kg)) == len(s.questions(fb_kg))
    new_pos = [int(((sc.depth > 0) & (sc.depth <= d) & (sc.label == 1)).sum()) for d in range(1, 11)]
    assert new_pos == [118, 287, 428, 614, 786, 965, 1168, 1327, 1520, 1715]
    q = adopt_published_queries(o.questions(fb_kg), fb_files["queries_O"], fb_kg)
    assert q.qid[0] == "head0" and len(q) == 22850
    adopt_published_queries(sc.questions(fb_kg), fb_files["queries_SC"], fb_kg)


@needs_mirror
def test_fb15k237_categories_and_unseen_entities(fb_kg):
    cats = fb_kg.relation_category
    assert {c: cats.count(c) for c in set(cats)} == {"one_to_one": 17, "one_to_many": 26, "many_to_one": 86,
                                                     "many_to_many": 108}
    train_ents = set(fb_kg.splits["train"][:, [0, 2]].ravel().tolist())
    test = fb_kg.splits["test"]
    assert sum(1 for h, _, t in test.tolist() if h not in train_ents or t not in train_ents) == 28


@needs_mirror
def test_wn18rr_questions(tmp_path):
    safe_extract(MIRROR / "TimDettmers/ConvE/WN18RR.tar.gz", tmp_path)
    kg = build_kg("WN18RR", tmp_path / "train.txt", tmp_path / "valid.txt", tmp_path / "test.txt")
    assert (kg.num_entities, kg.num_relations) == (40943, 11)
    q = adopt_published_queries(full_test(kg, "WN18RR").questions(kg), MIRROR / SC / "WN18RR/trec_queries.txt", kg)
    assert len(q) == 5716


def test_pause_point_sleeps_only_at_the_named_point(monkeypatch):
    from kgeval.io import pause as kio

    slept = []
    monkeypatch.setattr(kio.time, "sleep", slept.append)
    monkeypatch.delenv(kio.PAUSE_ENV, raising=False)
    kio.pause_point("dump_before_meta")
    monkeypatch.setenv(kio.PAUSE_ENV, "train_after_checkpoint=7, dump_before_meta=2.5")
    kio.pause_point("dump_before_meta")
    kio.pause_point("elsewhere")
    assert slept == [2.5]
    for bad in ("dump_before_meta", "dump_before_meta=-1", "=3", "x=nan", "x=soon"):
        monkeypatch.setenv(kio.PAUSE_ENV, bad)
        with pytest.raises(ValueError, match="KGEVAL_PAUSE_AT"):
            kio.pause_point("x")
