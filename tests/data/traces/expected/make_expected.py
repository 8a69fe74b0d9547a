#!/usr/bin/env python3
"""An independent reference for the request files `mlasim import` writes from the samples in
tests/data/traces/ (exact decimal and calendar arithmetic with Python's datetime and Decimal):
run it from this folder to regenerate the *.jsonl files the import tests compare against."""
import csv, datetime, json, math
from decimal import Decimal, ROUND_HALF_UP

MAX_MODEL_LEN = 163840


def azure_time(text):
    date, _, frac = text.partition(".")
    dt = datetime.datetime.strptime(date, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return Decimal(int(dt.timestamp())) + (Decimal("0." + frac) if frac else Decimal(0))


def seconds(d):
    us = int((d * 1_000_000).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    s = f"{us // 1_000_000}.{us % 1_000_000:06d}".rstrip("0").rstrip(".")
    return s


def write(name, rows, max_model_len=MAX_MODEL_LEN, limit=None):
    """rows: (time as Decimal seconds, prompt, output, hash_ids or None)."""
    out, t0 = [], None
    for t, p, o, h in rows:
        if o == 0 or p == 0 or p >= max_model_len:
            continue
        t0 = t if t0 is None else t0
        line = f'{{"arrival_time": {seconds(t - t0)}, "prompt_len": {p}, "max_tokens": {o}, "ignore_eos": true'
        if h is not None:
            line += ', "prompt_hash_ids": [' + ", ".join(map(str, h)) + "]"
        out.append(line + "}\n")
        if limit and len(out) == limit:
            break
    open(name, "w").write("".join(out))


with open("../azure_sample.csv") as f:
    write("azure_sample.jsonl", [(azure_time(r["TIMESTAMP"]), int(r["ContextTokens"]), int(r["GeneratedTokens"]), None)
                                 for r in csv.DictReader(f)])
with open("../burstgpt_sample.csv") as f:
    write("burstgpt_sample.jsonl", [(Decimal(r["Timestamp"]), int(r["Request tokens"]), int(r["Response tokens"]), None)
                                    for r in csv.DictReader(f)])
with open("../mooncake_sample.jsonl") as f:
    rows = [json.loads(l) for l in f if l.strip()]
for r in rows:
    assert len(r["hash_ids"]) == math.ceil(r["input_length"] / 512)
write("mooncake_sample.jsonl", [(Decimal(r["timestamp"]) / 1000, r["input_length"], r["output_length"], r["hash_ids"])
                                for r in rows])
