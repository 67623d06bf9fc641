"""Short texts in 17 Latin-script languages for `examples/langid -- --tsv`: the translated messages of the
Debian packages installed on this machine (their `.mo` files under /usr/share/locale), as `lang<TAB>text`
lines on standard output, English from the messages' originals.

A message is kept when it is a question, or a sentence of four words or more, of 15 to 150 characters with
no format placeholder or markup; each text once per language. UI messages are short and technical, much as
visitors' questions are short: it is where trigram detection is weakest. What it gives depends on the
packages installed (on the machine of docs/performance.md, 36,337 texts).

    python3 benches/langid_messages.py > target/langid_messages.tsv
    cargo run --release --example langid -- --tsv target/langid_messages.tsv
"""
import glob
import gettext
import sys

LANGS = "fr it pt nl pl sv da fi cs ro hu id de es tr vi".split()


def keep(s):
    return 15 <= len(s) <= 150 and (s.endswith("?") or (s.endswith(".") and len(s.split()) >= 4)) and not any(c in s for c in "%{<")


def main():
    seen = set()
    for lang in LANGS:
        for mo in sorted(glob.glob(f"/usr/share/locale/{lang}/LC_MESSAGES/*.mo")):
            try:
                with open(mo, "rb") as f:
                    catalog = gettext.GNUTranslations(f)._catalog
            except Exception:  # unreadable or not UTF-8: left out
                continue
            for original, translated in catalog.items():
                if not isinstance(original, str) or not isinstance(translated, str):
                    continue
                for code, text in (("en", original), (lang, translated)):
                    text = " ".join(text.replace("_", "").replace("&", "").split())
                    if not keep(text) or (code == lang and text == original) or (code, text) in seen:
                        continue
                    seen.add((code, text))
                    sys.stdout.write(f"{code}\t{text}\n")


if __name__ == "__main__":
    main()
