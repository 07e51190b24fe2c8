"""Secrets never reach a file we write: the one place that decides what is secret and hides it.

- by name: :func:`is_secret_name` (``DB_PASSWORD``, ``TORCH_HUB_AUTH``, ``SLURM_JOB_PASS``, …);
- by value: :func:`scrub` hides the password of ``scheme://user:pass@host`` (any scheme), secret
  query parameters (``?token=…``) and well-known token shapes (``ghp_…``, ``hf_…``, ``AKIA…``,
  private-key blocks, ``Bearer …``);
- both: :func:`redact_env` for a mapping of variables, :func:`redact_text` / :func:`redact_argv`
  for text that may quote secret values, :func:`redact_tree` for a whole JSON/YAML document
  (:func:`redact_yaml_text` for its text),
  :func:`redact_shown` for log text a report shows (the logs themselves stay intact).

Hidden parts become :data:`REDACTED`. Used by the campaign (done markers, ``campaign.yaml``,
``status.json``, dry runs) and by environment records (``dlperf env``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

REDACTED = "***"

# The words of a name (``_``/``.``/``-`` and camelCase split it): OPENAI_API_KEY, hfToken
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A word naming a secret, alone or ending a compound (PGPASSWORD, DBPASS, OAUTH, SSL_PKEY);
# plurals are not (--num-keys, --max-tokens, NUM_PASSES count things)
_SECRET_WORD = re.compile(r"(?:token|secret|pass|passwd|password|passphrase|pwd|key|"
                          r"credentials?|auth|cookie|session|private|signature|salt|cert)$")
# A name of a count or size of the thing a secret word names (--num-keys, --key-size)
_COUNT_FIRST = frozenset({"n", "num", "number", "max", "min", "count", "total"})
_COUNT_LAST = frozenset({"size", "len", "length", "count", "num", "number", "bits"})
# A plural that ends a name holds several secrets (API_KEYS, HF_TOKENS), not a count of them
_SECRETS_LAST = frozenset({"keys", "tokens", "secrets", "passwords", "credentials",
                           "cookies"})
# A name that holds where a secret is, not the secret: ssh.key_file, SSL_CERT_FILE, ...
_LOCATION_NAME = re.compile(r"[_.-]?(FILE|PATH|DIR|DIRECTORY)$", re.I)
# An InfiniBand partition key (NCCL_IB_PKEY, UCX_IB_PKEY, OMPI_MCA_btl_openib_pkey): the index
# of an InfiniBand network partition the subnet manager assigns, public like a VLAN id, not a credential
_IB_PARTITION_KEY = re.compile(r"(?<![A-Z0-9])(?:IB|OPENIB)[_.-]PKEY(?![A-Z0-9])", re.I)
# scheme://user:password@host — keeps the user, hides the password
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:)([^\s/]+)(@)")
# the same without a scheme, as in ssh targets: user:password@host
_USER_PASSWORD = re.compile(r"((?<![\w:/@.-])[\w.-]+:)([^\s/:@]+)(@[\w.-])")
# name=value in a query string or as --name=value: hidden when is_secret_name(name) (or sig,
# the signature of an Azure SAS URL)
_PARAM = re.compile(r"((?:[?&;]|^-{1,2}|\s-{1,2})([A-Za-z0-9_.-]+)=)([^&;#\s]+)")
_TOKEN_SHAPES = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"
    r"|\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|\bglpat-[A-Za-z0-9_-]{16,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bhf_[A-Za-z0-9]{20,}"
    r"|\bsk-[A-Za-z0-9_-]{20,}|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}|(?<=Basic )[A-Za-z0-9+/=]{8,}",
    re.S)


def is_secret_name(name: str) -> bool:
    """True when a variable, key or option named `name` holds a secret by its name: one of
    its words is a credential word or ends in one (``DB_PASSWORD``, ``--hub-token``,
    ``AWS_SECRET_ACCESS_KEY``, ``PGPASSWORD``). Not: names of files or folders (``*_FILE`` /
    ``*_PATH`` / ``*_DIR``), an InfiniBand partition key (``NCCL_IB_PKEY``), counts and
    sizes (``--num-keys``, ``--max-tokens``, ``--key-size``: first word num/n/max/min/…,
    or last word size/len/count/…), plurals inside a name and longer words
    (``--tokens-per-batch``, ``TOKENIZERS_PARALLELISM``, ``--keyword``, ``AUTHOR``). A
    plural that ends a name is secret (``OPENAI_API_KEYS``, ``HF_TOKENS``)."""
    name = str(name)
    if _LOCATION_NAME.search(name):
        return False
    words = [w.lower() for w in _WORDS.findall(_IB_PARTITION_KEY.sub("_", name))]
    if not words or words[0] in _COUNT_FIRST or words[-1] in _COUNT_LAST:
        return False
    return words[-1] in _SECRETS_LAST or any(_SECRET_WORD.search(w) for w in words)


def scrub(text: str) -> str:
    """`text` with URL passwords, secret query parameters and known token shapes hidden."""
    text = _URL_PASSWORD.sub(rf"\g<1>{REDACTED}\g<3>", str(text))
    text = _USER_PASSWORD.sub(rf"\g<1>{REDACTED}\g<3>", text)
    text = _PARAM.sub(lambda m: m.group(1) + REDACTED if _secret_param(m) else m.group(0),
                      text)
    return _TOKEN_SHAPES.sub(REDACTED, text)


def _secret_param(m: re.Match) -> bool:
    return m.group(2).lower() == "sig" or is_secret_name(m.group(2))


def secret_parts(text: str) -> list[str]:
    """The substrings of `text` that :func:`scrub` hides (to hide them elsewhere too)."""
    text = str(text)
    return [m.group(2) for m in _URL_PASSWORD.finditer(text)] + \
        [m.group(2) for m in _USER_PASSWORD.finditer(text)] + \
        [m.group(3) for m in _PARAM.finditer(text) if _secret_param(m)] + \
        [m.group(0) for m in _TOKEN_SHAPES.finditer(text)]


def redact_value(name: str, value: Any) -> str:
    """The text of `value` as it may be written for a variable or key called `name`."""
    return REDACTED if is_secret_name(name) else scrub(str(value))


def redact_env(env: Mapping[str, Any]) -> dict[str, str]:
    """Copy of `env` where secret-named variables read ``***`` and other values are scrubbed."""
    return {str(k): redact_value(str(k), v) for k, v in env.items()}


def _secret_option_value(prev: Any, word: Any) -> bool:
    """True when `word` is the value of the secret-named option `prev` (``--db-password X``)."""
    prev, word = str(prev), str(word)
    return prev.startswith("-") and "=" not in prev and is_secret_name(prev) and \
        not word.startswith("-")


def secrets_in(data: Any) -> list[str]:
    """Every secret string a JSON/YAML-shaped document holds (an environment, a spec): the
    text values under secret-named keys, the value after a secret-named option in a list
    (``[--api-key, X]``) and the secret parts of every string, longest first (so that a
    longer secret is replaced before its parts)."""
    found: set[str] = set()

    def walk(x: Any, secret: bool) -> None:
        if isinstance(x, Mapping):
            for k, v in x.items():
                walk(v, secret or is_secret_name(str(k)))
        elif isinstance(x, (list, tuple)):
            for prev, v in zip([None, *x], x):
                walk(v, secret or (isinstance(prev, str) and _secret_option_value(prev, v)))
        elif isinstance(x, str):
            found.update([x] if secret and x else [])
            found.update(secret_parts(x))
        elif secret and isinstance(x, (int, float)) and len(str(x)) >= 6:
            found.add(str(x))  # a numeric PIN or password, not a flag or a count

    walk(data, False)
    return sorted(found, key=len, reverse=True)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with each of `secrets` (exact strings) replaced, then :func:`scrub`-bed."""
    text = str(text)
    for s in sorted({str(s) for s in secrets if str(s)}, key=len, reverse=True):
        # a very short secret is hidden where it is the whole text, not inside other words
        if len(s) >= 3 or text == s:
            text = text.replace(s, REDACTED)
    return scrub(text)


#: A secret known by its value is hidden in text a report shows only when at least this long:
#: a shorter one ('1234', 'True') could equal a number or a word of an unrelated line.
MIN_SHOWN_SECRET = 8
# "--db-password X" / "-token X" inside a line of text: the option's name and its value
_OPTION_VALUE = re.compile(r"((?:^|(?<=\s))-{1,2}([A-Za-z][\w.-]*)\s+)([^\s-]\S*)")


def redact_shown(text: str, secrets: Iterable[str] = ()) -> str:
    """Text a report shows from a log or a record, never the file itself: each of `secrets`
    of :data:`MIN_SHOWN_SECRET` characters or more, the value after a secret-named option
    (``--hf-token X``) and what :func:`scrub` finds, hidden."""
    text = str(text)
    for s in sorted({str(s) for s in secrets if len(str(s)) >= MIN_SHOWN_SECRET},
                    key=len, reverse=True):
        text = text.replace(s, REDACTED)
    text = _OPTION_VALUE.sub(lambda m: m.group(1) + REDACTED if is_secret_name(m.group(2))
                             else m.group(0), text)
    return scrub(text)


# "key: value" on a YAML line (a list item's too): indentation, key, separator, value
_YAML_PAIR = re.compile(r"^([ \t]*(?:-[ \t]+)?)([\"']?)([\w.-]+)\2([ \t]*:[ \t]+)(?![|>&*!#])"
                        r"(\S.*?)[ \t]*$", re.M)  # within one line: blank lines stay


def redact_yaml_text(text: str, secrets: Iterable[str] = ()) -> str:
    """YAML text as a report shows it (a hand-written campaign.yaml, say): the value of each
    secret-named key on its line (``password: x``, however short), then `secrets` (the values
    :func:`secrets_in` finds in the parsed document, e.g. after ``--hf-token`` in a list) and
    what :func:`scrub` finds, hidden."""
    text = _YAML_PAIR.sub(lambda m: m.group(1) + m.group(2) + m.group(3) + m.group(2)
                          + m.group(4) + REDACTED if is_secret_name(m.group(3))
                          else m.group(0), str(text))
    return redact_text(text, secrets)


def redact_argv(argv: Sequence[str], env: Mapping[str, Any] = {}) -> list[str]:  # noqa: B006
    """`argv` with the secrets of `env` (see :func:`secrets_in`), URL passwords and the value
    after a secret-named option (``--db-password X``) hidden."""
    secrets = secrets_in(env)
    out, prev = [], ""
    for a in map(str, argv):
        out.append(REDACTED if _secret_option_value(prev, a) else redact_text(a, secrets))
        prev = a
    return out


def redact_tree(data: Any, secrets: Iterable[str] = (), by_name: bool = True) -> Any:
    """A copy of a JSON/YAML-shaped document with every string passed through
    :func:`redact_text`; with `by_name`, the value under a secret-named key becomes ``***``."""
    secrets = list(secrets)

    def walk(x: Any) -> Any:
        if isinstance(x, Mapping):
            return {k: (REDACTED if by_name and x[k] is not None and is_secret_name(str(k))
                        else walk(x[k])) for k in x}
        if isinstance(x, (list, tuple)):
            return [walk(v) for v in x]
        if isinstance(x, str):
            return redact_text(x, secrets)
        return x

    return walk(data)
