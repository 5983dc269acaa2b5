"""The search engine's text handling: name splitting, stemming and tokenizing."""

from __future__ import annotations

from mcp_kernel.servers.search import split_name, stem, tokenize


def test_split_name():
    assert split_name("get-weather.v2") == ["get", "weather", "v2"]
    assert split_name("listGenres") == ["list", "genres"]
    assert split_name("read_text_file") == ["read", "text", "file"]
    assert split_name("HTTPServerStatus") == ["http", "server", "status"]
    assert split_name("dotted.and-dashed name") == ["dotted", "and", "dashed", "name"]
    assert split_name("lire_fichier_café") == ["lire", "fichier", "café"]


def test_stem_plurals_and_suffixes():
    assert stem("directories") == stem("directory") == "directory"
    assert stem("books") == stem("book") == "book"
    assert stem("files") == stem("file")
    assert stem("matches") == stem("match") == "match"
    assert stem("reading") == stem("read") == "read"
    assert stem("listed") == stem("listing") == stem("list") == "list"
    assert stem("created") == stem("create")
    assert stem("running") == "run"
    assert stem("status") == "status"  # not a plural
    assert stem("string") == "string"  # "str" has no vowel: not -ing
    assert stem("address") == "address"


def test_tokenize_drops_stopwords_and_splits_identifiers():
    assert tokenize("Read the read_text_file of a Directory") == ["read", "read", "text", stem("file"), "directory"]
