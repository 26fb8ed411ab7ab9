"""Text normalization for word error rate: what a recognizer writes and what the caller said, as the same words.

The references are spoken words ("five five five, two one three"); recognizers write digits, e-mail
addresses and dates ("555-213", "john.smith@gmail.com", "July 4th, 1985"). Both sides are lowercased,
written-out forms are spoken (digit groups digit by digit, 1100-2099 as years, other numbers as
cardinals, ordinals, @ and dots in addresses, $, p.m.), spelled letters are joined ("S M I T H" and
"S-M-I-T-H" are "smith"), fillers and punctuation dropped.
"""

import re

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_ORDINAL = {
    "one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth", "twelve": "twelfth",
}  # fmt: skip
_MONTHS = "january february march april may june july august september october november december"
_FILLERS = {"uh", "um", "uhm", "er", "ah", "hmm", "mm"}
_SAME = {"ok": "okay", "yep": "yep", "alright": "all right", "email": "email", "e-mail": "email", "nonprofits": "nonprofits"}


def cardinal(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        return _ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + cardinal(n % 100))
    if n < 1_000_000:
        return cardinal(n // 1000) + " thousand" + ("" if n % 1000 == 0 else " " + cardinal(n % 1000))
    return " ".join(_ONES[int(d)] for d in str(n))


def ordinal(n: int) -> str:
    words = cardinal(n).split()
    last = words[-1]
    if last in _ORDINAL:
        words[-1] = _ORDINAL[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def year(n: int) -> str:
    if 2000 <= n <= 2009:
        return cardinal(n)
    high, low = divmod(n, 100)
    return cardinal(high) + (" hundred" if low == 0 else (" oh " + _ONES[low] if low < 10 else " " + cardinal(low)))


def _minutes(mm: str) -> str:
    return "oh " + _ONES[int(mm)] if mm.startswith("0") else cardinal(int(mm))


def _digits(match: re.Match) -> str:
    token = match.group(0)
    if "-" in token or " " in token:  # a phone-like group (555-213-4498, 94 107): every digit
        return " ".join(_ONES[int(d)] for d in token if d.isdigit())
    if len(token) > 4 or token.startswith("0") and len(token) > 1:
        return " ".join(_ONES[int(d)] for d in token)
    n = int(token)
    if len(token) == 4:
        return year(n) if 1100 <= n <= 2099 else " ".join(_ONES[int(d)] for d in token)
    return cardinal(n)


def normalize(text: str) -> list[str]:
    t = text.lower()
    t = re.sub(r"\b(\d+)(st|nd|rd|th)\b", lambda m: ordinal(int(m.group(1))), t)
    t = re.sub(r"\$(\d+)(?:\.(\d\d))?", lambda m: f"{m.group(1)} dollars" + (f" and {m.group(2)} cents" if m.group(2) else ""), t)
    t = re.sub(rf"\b({_MONTHS.replace(' ', '|')}) (\d{{1,2}})\b", lambda m: f"{m.group(1)} {ordinal(int(m.group(2)))}", t)
    t = re.sub(r"\bat (\d{1,2})[.:](\d\d)\b", lambda m: f"at {m.group(1)}:{m.group(2)}", t)  # "at 2.30"
    t = re.sub(r"\b(\d{1,2}):(\d\d)\b", lambda m: cardinal(int(m.group(1))) + ("" if m.group(2) == "00" else " " + _minutes(m.group(2))), t)
    t = re.sub(r"\b([ap])\.\s?m\b\.?", r"\1m", t)
    t = t.replace("@", " at ")
    t = re.sub(r"(?<=\w)\.(?=\w)", " dot ", t)
    t = re.sub(r"\d+(?:-\d+)+|\d+(?: \d{3,})+|\d+", _digits, t)
    t = re.sub(r"(?<=\b[a-z])[-.](?=[a-z]\b)", " ", t)  # S-M-I-T-H, S.M.I.T.H
    t = re.sub(r"[^a-z' ]+", " ", t).replace("'", "")
    words: list[str] = []
    run: list[str] = []  # single letters in a row: a spelled word
    for word in t.split() + [""]:
        if len(word) == 1:
            run.append(word)
            continue
        if len(run) > 1:
            run = ["".join(run)]
        words.extend(run)
        run = []
        if word and word not in _FILLERS:
            words.extend(_SAME.get(word, word).split())
    return words


def edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    row = list(range(len(hypothesis) + 1))
    for i, word in enumerate(reference, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(hypothesis, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (word != other))
    return row[-1]
