"""The campaign's one SQLite file: schema (versioned with ``PRAGMA user_version``), connections, people, tokens.

One file holds everything a campaign needs: the items to judge in serving order, the comparisons they decide
(with each item's coefficient), the people and every judgment. WAL lets the live page read while annotators
write; every write that decides an item's state runs in one ``BEGIN IMMEDIATE`` transaction (SQLite's single
writer), so two judgments of the same item at the same moment are serialised, never lost nor tripled. The file
is created readable by its owner only: it holds the annotators' answers and the hashes of their tokens.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import sqlite3
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError
from ..io.pause import pause_point
from ..io.temps import make_part

SCHEMA_VERSION = 2
ROLES = ("annotator", "adjudicator", "curator")

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    pos INTEGER NOT NULL UNIQUE,
    batch TEXT NOT NULL, sheet_item TEXT NOT NULL UNIQUE,
    head_id TEXT NOT NULL, relation TEXT NOT NULL, tail_id TEXT NOT NULL,
    head_name TEXT NOT NULL, tail_name TEXT NOT NULL, question TEXT NOT NULL,
    audit INTEGER NOT NULL DEFAULT 0,
    n_assigned INTEGER NOT NULL DEFAULT 0 CHECK (n_assigned BETWEEN 0 AND 2),
    n_judged INTEGER NOT NULL DEFAULT 0 CHECK (n_judged BETWEEN 0 AND 2),
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'conflict', 'final')),
    final_label INTEGER CHECK (final_label IN (0, 1)),
    final_by TEXT CHECK (final_by IN ('agreement', 'adjudication', 'import')),
    final_seq INTEGER UNIQUE
);
CREATE INDEX items_free ON items (pos) WHERE state = 'open' AND n_assigned < 2;
CREATE INDEX items_conflict ON items (pos) WHERE state = 'conflict';
CREATE INDEX items_half ON items (pos) WHERE state = 'open' AND n_assigned = 1;
CREATE INDEX items_final ON items (final_seq) WHERE state = 'final';
CREATE TABLE people (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('annotator', 'adjudicator', 'curator')),
    token_sha256 TEXT NOT NULL UNIQUE, created REAL NOT NULL
);
CREATE TABLE assignments (
    item INTEGER NOT NULL REFERENCES items (id), person INTEGER NOT NULL REFERENCES people (id),
    at REAL NOT NULL, judged INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (item, person)
);
CREATE INDEX assignments_open ON assignments (person) WHERE judged = 0;
CREATE TABLE judgments (
    id INTEGER PRIMARY KEY,
    item INTEGER NOT NULL REFERENCES items (id), person INTEGER NOT NULL REFERENCES people (id),
    kind TEXT NOT NULL CHECK (kind IN ('annotation', 'adjudication')),
    label TEXT NOT NULL CHECK (label IN ('y', 'n', 'u')),
    source TEXT NOT NULL, note TEXT NOT NULL, seconds REAL, at REAL NOT NULL,
    UNIQUE (item, person)
);
CREATE INDEX judgments_person ON judgments (person, id);
CREATE TABLE comparisons (
    id INTEGER PRIMARY KEY, a TEXT NOT NULL, b TEXT NOT NULL, metric TEXT NOT NULL,
    base REAL NOT NULL, lo REAL NOT NULL, hi REAL NOT NULL,
    bound_low REAL, bound_high REAL,
    UNIQUE (a, b, metric)
);
CREATE TABLE coefficients (
    comparison INTEGER NOT NULL REFERENCES comparisons (id), item INTEGER NOT NULL REFERENCES items (id),
    c1 REAL NOT NULL, c0 REAL NOT NULL,
    dpos REAL NOT NULL DEFAULT 0, dneg REAL NOT NULL DEFAULT 0,
    mtc REAL NOT NULL DEFAULT 0, mtc_tie REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (comparison, item)
);
CREATE TABLE budget_units (
    comparison INTEGER PRIMARY KEY REFERENCES comparisons (id),
    v BLOB NOT NULL, item BLOB NOT NULL  -- float64 per unit; int64 (2, drawn): positions in v, item ids
);
"""
# tables a file made by an earlier kgeval of the same schema version may lack: the live page then does without
# (budget_units: the judgments that would decide a pair, :mod:`kgeval.sampling.more`)
OPTIONAL_TABLES = ("budget_units",)

ITEM_COLUMNS = ("batch", "sheet_item", "head_id", "relation", "tail_id", "head_name", "tail_name", "question",
                "audit")


def _columns(conn: sqlite3.Connection) -> dict[str, set[str]]:
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: {r[1] for r in conn.execute(f"PRAGMA table_info('{t}')")} for t in tables}


def _missing(conn: sqlite3.Connection) -> str | None:
    """The first table or column of :data:`SCHEMA` the file lacks (a file edited by hand, or half-copied): then
    the server refuses to start, rather than answering every request that touches it with an HTTP 500."""
    expected = sqlite3.connect(":memory:")
    expected.executescript(SCHEMA)
    want, have = _columns(expected), _columns(conn)
    expected.close()
    for table, cols in want.items():
        if table not in have and table in OPTIONAL_TABLES:
            continue
        if table not in have:
            return f"table {table}"
        if cols - have[table]:
            return f"column {table}.{sorted(cols - have[table])[0]}"
    return None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def connect(path: str | Path, must_exist: bool = True) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, foreign keys on, schema checked."""
    path = Path(path)
    if must_exist and not path.is_file():
        raise InputError(path, None, "no such campaign database (create it with `kgeval campaign create`)")
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    if must_exist:
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            app = conn.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise InputError(path, None, f"not a kgeval campaign database: {exc}") from None
        if app is None or app[0] != "kgeval-campaign":
            conn.close()
            raise InputError(path, None, "not a kgeval campaign database")
        if version != SCHEMA_VERSION:
            conn.close()
            raise InputError(path, None, f"campaign schema version {version}; this kgeval reads version "
                                         f"{SCHEMA_VERSION} only")
        missing = _missing(conn)
        if missing is not None:
            conn.close()
            raise InputError(path, None, f"not a complete kgeval campaign database: {missing} is missing")
        conn.execute("PRAGMA synchronous = FULL")  # a judgment acknowledged to a client survives a crash
    return conn


@contextmanager
def write(conn: sqlite3.Connection):
    """One write transaction taken at its start (``BEGIN IMMEDIATE``): a reader-turned-writer never deadlocks.
    Inside a transaction already open (an import's, which must land whole or not at all) it joins that one: the
    outer block commits or rolls back every write together."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def create(path: str | Path, items: list[dict], meta: dict[str, str],
           fill: Callable[[sqlite3.Connection], None] | None = None) -> None:
    """A new campaign file with ``items`` (dicts of :data:`ITEM_COLUMNS`, in serving order), then whatever
    ``fill`` writes through a connection to it (the comparisons, the evidence); an existing file is refused,
    never replaced. All of it is written under a temporary name (kgeval's, :mod:`kgeval.io.temps`, so that a
    killed create leaves nothing the next one keeps) and renamed into place when complete: a failure at any point
    leaves no campaign file, and the corrected create is not refused."""
    path = Path(path)
    if path.exists():
        raise InputError(path, None, "already exists: a campaign file is never replaced (choose another name)")
    try:
        tmp = make_part(path)  # created 0600 (mkstemp): owner only, whatever the umask
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        conn = sqlite3.connect(str(tmp), isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.executescript(SCHEMA)
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO meta VALUES (?, ?)",
                         [("application", "kgeval-campaign"), ("created", repr(time.time())),
                          ("secret", secrets.token_hex(32))] + sorted(meta.items()))
        conn.executemany(f"INSERT INTO items (pos, {', '.join(ITEM_COLUMNS)}) VALUES (?{', ?' * len(ITEM_COLUMNS)})",
                         [(i, *(row[c] for c in ITEM_COLUMNS)) for i, row in enumerate(items, start=1)])
        conn.execute("COMMIT")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.close()
        if fill is not None:
            conn = connect(tmp)
            try:
                fill(conn)
            finally:
                conn.close()
        pause_point("campaign_create_before_rename")
        if path.exists():  # another create finished meanwhile: its file stays
            raise InputError(path, None, "already exists: a campaign file is never replaced (choose another "
                                         "name)")
        os.replace(tmp, path)
    except BaseException as exc:
        for p in (tmp, Path(f"{tmp}-journal"), Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            p.unlink(missing_ok=True)
        # name the campaign file, never its temporary name; SQLite's "database or disk is full" is a full disk
        if isinstance(exc, OSError) and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        if isinstance(exc, sqlite3.Error) and "full" in str(exc):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from None
        if isinstance(exc, sqlite3.Error | OSError | UnicodeEncodeError):
            raise InputError(path, None, f"cannot be created: {exc}") from None
        raise


def add_person(conn: sqlite3.Connection, name: str, role: str) -> str:
    """Register a person; returns their token (shown once: only its SHA-256 is stored)."""
    if role not in ROLES:
        raise InputError(None, None, f"role {role!r}: expected one of {', '.join(ROLES)}")
    if not name.strip() or len(name) > 100 or any(ord(ch) < 32 for ch in name):
        raise InputError(None, None, f"name {name!r}: expected 1 to 100 printable characters")
    token = secrets.token_urlsafe(24)
    try:
        with write(conn):
            conn.execute("INSERT INTO people (name, role, token_sha256, created) VALUES (?, ?, ?, ?)",
                         (name, role, token_hash(token), time.time()))
    except sqlite3.IntegrityError:
        raise InputError(None, None, f"name {name!r}: already a person of this campaign") from None
    return token


def person_by_token(conn: sqlite3.Connection, token: str) -> sqlite3.Row | None:
    return conn.execute("SELECT id, name, role FROM people WHERE token_sha256 = ?", (token_hash(token),)).fetchone()


def meta(conn: sqlite3.Connection) -> dict[str, str]:
    return {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM meta")}
