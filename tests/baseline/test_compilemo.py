"""The base's catalogues compiled in its checkout: what ``gettext`` reads from the ``.mo``
made, against ``msgfmt`` and Babel where installed, and what a catalogue that does not
compile leaves."""

from __future__ import annotations

import gettext
import io
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_boundedreview.baseline.checkout import compilemo

HEADER = (
    'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
    '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n'
)
CATALOGUE = (
    HEADER
    + """\
# a translator's comment
#: app.py:1
#, python-format
msgid "Hello %s"
msgstr "Hallo %s"

msgctxt "menu"
msgid "Open"
msgstr "Öffnen"

msgid "Open"
msgstr "Offen"

#, fuzzy, python-format
msgid "Fuzzy"
msgstr "Flauschig"

msgid "Untranslated"
msgstr ""

#| msgid "an apple"
msgid "apple"
msgid_plural "apples"
msgstr[0] "Apfel"
msgstr[1] "Äpfel"

msgctxt "fruit"
msgid "one"
msgid_plural "many"
msgstr[0] "eins"
msgstr[1] "viele"

msgid ""
"multi "
"line\\t\\"q\\"\\\\ \\101\\x42"
msgstr "mehr\\n"
"zeilig"

#, fuzzy
#~ msgid "Old"
#~ msgstr "Alt"

msgid "after an obsolete one"
msgstr "nach"
"""
)


def table(data: bytes) -> dict[bytes, bytes]:
    """The keys and values a ``.mo`` holds, read from its two tables."""
    magic, _, count, originals, translations = struct.unpack("<5I", data[:20])
    assert magic == compilemo.MAGIC
    found = {}
    for i in range(count):
        size, at = struct.unpack("<2I", data[originals + 8 * i : originals + 8 * i + 8])
        vsize, vat = struct.unpack("<2I", data[translations + 8 * i : translations + 8 * i + 8])
        found[data[at : at + size]] = data[vat : vat + vsize]
    return found


def test_gettext_reads_what_it_compiles() -> None:
    read = gettext.GNUTranslations(io.BytesIO(compilemo.compile_po(CATALOGUE.encode())))
    assert read.gettext("Hello %s") == "Hallo %s"
    assert read.pgettext("menu", "Open") == "Öffnen"
    assert read.gettext("Open") == "Offen"
    assert read.gettext("Fuzzy") == "Fuzzy"  # left out, as msgfmt does
    assert read.gettext("Untranslated") == "Untranslated"
    assert [read.ngettext("apple", "apples", n) for n in (1, 2)] == ["Apfel", "Äpfel"]
    assert read.npgettext("fruit", "one", "many", 5) == "viele"
    assert read.gettext('multi line\t"q"\\ AB') == "mehr\nzeilig"
    assert read.gettext("Old") == "Old"
    assert read.gettext("after an obsolete one") == "nach"  # not fuzzy: the flag was Old's
    assert read.info()["content-type"] == "text/plain; charset=UTF-8"


def test_keys_are_sorted_and_the_header_is_kept_when_fuzzy() -> None:
    text = '#, fuzzy\nmsgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    text += 'msgid "b"\nmsgstr "B"\n\nmsgid "a"\nmsgstr "A"\n'
    assert list(table(compilemo.compile_po(text.encode()))) == [b"", b"a", b"b"]


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU msgfmt is not installed")
def test_it_holds_what_msgfmt_writes(tmp_path: Path) -> None:
    (tmp_path / "x.po").write_text(CATALOGUE, encoding="utf-8")
    subprocess.run(["msgfmt", "-o", tmp_path / "x.mo", tmp_path / "x.po"], check=True)
    ours = compilemo.compile_po(CATALOGUE.encode())
    assert table(ours) == table((tmp_path / "x.mo").read_bytes())


def test_it_answers_as_babel_compiles() -> None:
    pofile = pytest.importorskip("babel.messages.pofile")
    mofile = pytest.importorskip("babel.messages.mofile")
    text = CATALOGUE.replace(" \\101\\x42", "").encode()  # Babel reads no octal, no hex
    theirs = io.BytesIO()
    mofile.write_mo(theirs, pofile.read_po(io.BytesIO(text)))
    read = [
        gettext.GNUTranslations(io.BytesIO(data))
        for data in (theirs.getvalue(), compilemo.compile_po(text))
    ]
    asks = [("gettext", "Hello %s"), ("gettext", "Open"), ("gettext", "Fuzzy")]
    asks += [("pgettext", "menu", "Open"), ("gettext", 'multi line\t"q"\\')]
    asks += [("ngettext", "apple", "apples", n) for n in (1, 2)]
    asks += [("npgettext", "fruit", "one", "many", n) for n in (1, 2)]
    for name, *args in asks:
        assert getattr(read[0], name)(*args) == getattr(read[1], name)(*args), (name, args)


def test_bytes_stay_in_the_catalogues_charset() -> None:
    text = 'msgid ""\nmsgstr "Content-Type: text/plain; charset=Shift_JIS\\n"\n\n'
    text += 'msgid "table"\nmsgstr "表"\n'  # 表 is 0x95 0x5c in Shift_JIS: a backslash byte
    read = gettext.GNUTranslations(io.BytesIO(compilemo.compile_po(text.encode("shift_jis"))))
    assert read.gettext("table") == "表"
    latin = 'msgid ""\nmsgstr "Content-Type: text/plain; charset=ISO-8859-1\\n"\n\n'
    latin += 'msgid "yes"\nmsgstr "sí"\n'
    read = gettext.GNUTranslations(io.BytesIO(compilemo.compile_po(latin.encode("latin-1"))))
    assert read.gettext("yes") == "sí"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('msgid "a\nmsgstr "b"\n', "line 1: a string with no closing quote"),
        ('msgid "a"\n', "line 1: a message with no msgstr"),
        ('msgstr "b"\n', "line 1: msgstr with no msgid before it"),
        ('msgid "a"\nmsgstr "b"\nmsgid "a"\nmsgstr "c"\n', "line 3: a message defined twice"),
        ('msgid "a"\nmsgstr "\\q"\n', "line 2: unknown escape sequence \\q"),
        ('msgid "a"\nmsgstr "b" x\n', "line 2: text after the closing quote"),
        ('msgid "a"\nmsgid_plural "as"\nmsgstr[1] "b"\n', "line 3: msgstr[1] out of place"),
        ('msgid "a"\nmsgid_plural "as"\nmsgstr "b"\n', "line 3: msgstr out of place"),
        ('msgid "a"\nmsgstr[0] "b"\n', "line 2: msgstr[0] out of place"),
        ('"a"\n', "line 1: a string that continues nothing"),
        ('msgid "a"\nmsgstr "b"\nmsgfoo "c"\n', "line 3: neither a keyword"),
        ('msgid "a"\nmsgstr "ä"\n', "line 1: the text is not ASCII, and its header names no"),
        (
            'msgid ""\nmsgstr "Content-Type: text/plain; charset=CHARSET\\n"\n',
            "its header names the charset 'CHARSET', which is unknown",
        ),
    ],
)
def test_a_catalogue_msgfmt_refuses_does_not_compile(text: str, why: str) -> None:
    with pytest.raises(compilemo.Malformed, match="^" + re.escape(why)):
        compilemo.compile_po(text.encode())


def test_invalid_text_in_the_named_charset_does_not_compile() -> None:
    text = b'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    with pytest.raises(compilemo.Malformed, match="line 4: the text is not valid UTF-8"):
        compilemo.compile_po(text + b'msgid "a"\nmsgstr "\xff"\n')


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout with a catalogue, one that does not compile, and one already compiled."""
    for folder in ("de", "fr", "it"):
        (tmp_path / folder).mkdir()
    (tmp_path / "de" / "app.po").write_text('msgid "a"\nmsgstr "A"\n')
    (tmp_path / "fr" / "app.po").write_text('msgid "a"\n')
    (tmp_path / "it" / "app.po").write_text('msgid "a"\nmsgstr "A"\n')
    (tmp_path / "it" / "app.mo").write_bytes(b"already there")
    return tmp_path


def test_each_mo_is_made_from_the_po_beside_it(checkout: Path, tmp_path: Path) -> None:
    names = ["de/app.mo", "fr/app.mo", "it/app.mo", "es/app.mo", "../x.mo", "/abs/x.mo"]
    failed = compilemo.compile_in(str(checkout), names)
    assert failed == [["fr/app.mo", "fr/app.po", "line 1: a message with no msgstr"]]
    with open(checkout / "de" / "app.mo", "rb") as made:
        assert gettext.GNUTranslations(made).gettext("a") == "A"
    assert not (checkout / "fr" / "app.mo").exists()
    assert (checkout / "it" / "app.mo").read_bytes() == b"already there"
    assert not (checkout / "es").exists()  # the base has no such catalogue: no translation


def test_a_catalogue_leading_out_of_the_checkout_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "outside.po").write_text('msgid "a"\nmsgstr "A"\n')
    (tmp_path / "checkout").mkdir()
    os.symlink(tmp_path / "outside.po", tmp_path / "checkout" / "app.po")
    failed = compilemo.compile_in(str(tmp_path / "checkout"), ["app.mo"])
    assert failed == [["app.mo", "app.po", "it leads out of the checkout"]]
    assert not (tmp_path / "checkout" / "app.mo").exists()


def test_the_child_reports_what_did_not_compile(checkout: Path, tmp_path: Path) -> None:
    """As the base re-run's child runs it: isolated, the standard library only."""
    report = tmp_path / "record"
    report.mkdir()
    script = Path(compilemo.__file__).resolve()
    argv = [sys.executable, "-I", "-S", str(script), str(checkout)]
    argv += [str(report / compilemo.REPORT), "de/app.mo", "fr/app.mo"]
    subprocess.run(argv, check=True, cwd=tmp_path)
    assert (checkout / "de" / "app.mo").exists()
    [why] = compilemo.failures(str(report))
    assert why == (
        "compiled translation fr/app.mo: the base's fr/app.po does not compile (line 1: a "
        "message with no msgstr), so the base ran without fr/app.mo; `base_setup` can build "
        "it there"
    )
    assert compilemo.failures(str(tmp_path / "nowhere")) == ()
