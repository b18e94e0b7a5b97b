#!/usr/bin/env python3
"""Generates a synthetic Rust tree for benchmarking msgaudit (see bench/run.sh).

Deterministic: the same --seed, --lines and repository give the same tree, byte for byte.

The tree is a workspace of crates (each with a Cargo.toml). Most of the code is ordinary
Rust (structs, enums, traits, impls, iterator chains, error handling, async functions,
test modules). A few percent (--relevant) is real consumer/producer code using the APIs
msgaudit knows (rdkafka, lapin, sqlx, aws-sdk-sqs, async-nats, ...): the single-file
fixtures under fixtures/, copied into about a third of the crates, so that those crates
are analyzed in full while the others are skipped by the prefilter, as in a real
monorepo. A few hundred YAML files are added: the fixtures' pipeline YAML and plain
Kubernetes manifests.
"""

import argparse
import os
import random
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

WORDS = (
    "order invoice payment customer account ledger shipment parcel route stock item price "
    "tax discount coupon cart session token user profile address region zone rate quote "
    "report metric event batch window cursor page filter index cache entry record slot "
    "lease lock budget limit quota plan tier feature flag rule policy audit trail note"
).split()
TYPES = ["u32", "u64", "i64", "usize", "f64", "bool", "String", "Vec<u8>", "Option<String>"]


def camel(*ws):
    return "".join(w.capitalize() for w in ws)


class Gen:
    def __init__(self, rng):
        self.r = rng

    def word(self):
        return self.r.choice(WORDS)

    def ident(self):
        return f"{self.word()}_{self.word()}"

    def struct(self, name):
        fields = [(f"{self.word()}_{i}", self.r.choice(TYPES)) for i in range(self.r.randint(3, 8))]
        out = [f"#[derive(Debug, Clone, Default, PartialEq)]", f"pub struct {name} {{"]
        out += [f"    pub {f}: {t}," for f, t in fields]
        out.append("}")
        return out, fields

    def enum(self, name):
        vs = sorted({camel(self.word()) for _ in range(self.r.randint(3, 7))})
        out = ["#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]",
               f"pub enum {name} {{"] + [f"    {v}," for v in vs] + ["}", ""]
        out += [f"impl {name} {{", "    pub fn as_str(self) -> &'static str {", "        match self {"]
        out += [f'            {name}::{v} => "{v.lower()}",' for v in vs]
        out += ["        }", "    }", "", "    pub fn parse(s: &str) -> Option<Self> {",
                "        match s {"]
        out += [f'            "{v.lower()}" => Some({name}::{v}),' for v in vs]
        out += ["            _ => None,", "        }", "    }", "}"]
        return out

    def body(self, fields, depth=2):
        r = self.r
        ind = "    " * depth
        lines = []
        for _ in range(r.randint(3, 9)):
            k = r.randrange(8)
            v = self.ident()
            f, t = r.choice(fields)
            if k == 0:
                lines += [f"{ind}let {v} = self.{f}.clone();",
                          f"{ind}tracing::debug!(?{v}, \"{self.word()} {self.word()}\");"]
            elif k == 1:
                lines += [f"{ind}let mut {v}: Vec<u64> = Vec::with_capacity({r.randint(2, 64)});",
                          f"{ind}for i in 0..{r.randint(2, 100)}u64 {{",
                          f"{ind}    if i % {r.randint(2, 7)} == 0 {{",
                          f"{ind}        {v}.push(i * {r.randint(2, 9)});",
                          f"{ind}    }} else if {v}.len() > {r.randint(3, 30)} {{",
                          f"{ind}        break;",
                          f"{ind}    }}",
                          f"{ind}}}",
                          f"{ind}total += {v}.iter().sum::<u64>();"]
            elif k == 2:
                lines += [f"{ind}let {v}: HashMap<String, usize> = input",
                          f"{ind}    .iter()",
                          f"{ind}    .filter(|s| !s.is_empty() && s.len() < {r.randint(8, 80)})",
                          f"{ind}    .map(|s| (s.to_lowercase(), s.len()))",
                          f"{ind}    .collect();",
                          f"{ind}total += {v}.values().copied().max().unwrap_or(0) as u64;"]
            elif k == 3:
                lines += [f"{ind}match input.get({r.randint(0, 5)}).map(|s| s.as_str()) {{",
                          f"{ind}    Some(\"{self.word()}\") => total += {r.randint(1, 99)},",
                          f"{ind}    Some(other) if other.starts_with('{self.word()[0]}') => {{",
                          f"{ind}        total = total.saturating_sub(other.len() as u64);",
                          f"{ind}    }}",
                          f"{ind}    Some(_) => {{}}",
                          f"{ind}    None => return Err(Error::Missing(\"{self.word()}\".into())),",
                          f"{ind}}}"]
            elif k == 4:
                lines += [f"{ind}let {v} = format!(\"{{}}-{{}}\", \"{self.word()}\", total);",
                          f"{ind}if {v}.len() > {r.randint(10, 40)} {{",
                          f"{ind}    return Err(Error::Invalid({v}));",
                          f"{ind}}}"]
            elif k == 5:
                lines += [f"{ind}let {v} = input",
                          f"{ind}    .iter()",
                          f"{ind}    .enumerate()",
                          f"{ind}    .fold(0u64, |acc, (i, s)| acc.wrapping_mul(31).wrapping_add(i as u64 + s.len() as u64));",
                          f"{ind}total ^= {v};"]
            elif k == 6:
                lines += [f"{ind}if let Some(first) = input.first() {{",
                          f"{ind}    let parsed: u64 = first.parse().map_err(|e| Error::Invalid(format!(\"{{e}}\")))?;",
                          f"{ind}    total = total.max(parsed);",
                          f"{ind}}}"]
            else:
                lines += [f"{ind}while total > {r.randint(1000, 100000)} {{",
                          f"{ind}    total /= {r.randint(2, 5)};",
                          f"{ind}}}"]
        return lines

    def method(self, fields, name):
        out = []
        if self.r.random() < 0.25:
            out.append(f"    pub async fn {name}(&self, input: &[String]) -> Result<u64, Error> {{")
        else:
            out.append(f"    pub fn {name}(&self, input: &[String]) -> Result<u64, Error> {{")
        out.append(f"        let mut total: u64 = {self.r.randint(0, 9)};")
        out += self.body(fields)
        out += ["        Ok(total)", "    }"]
        return out

    def module(self, target):
        """One ordinary Rust source file of about `target` lines."""
        r = self.r
        out = ["//! Generated module (msgaudit benchmark).", "",
               "use std::collections::HashMap;", "use std::fmt;", "",
               "#[derive(Debug)]", "pub enum Error {", "    Missing(String),",
               "    Invalid(String),", "}", "",
               "impl fmt::Display for Error {",
               "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {",
               "        match self {",
               "            Error::Missing(what) => write!(f, \"missing {what}\"),",
               "            Error::Invalid(what) => write!(f, \"invalid {what}\"),",
               "        }", "    }", "}", "",
               "impl std::error::Error for Error {}", ""]
        n = 0
        while len(out) < target:
            n += 1
            k = r.randrange(10)
            name = camel(self.word(), self.word()) + str(n)
            if k < 6:
                s, fields = self.struct(name)
                out += s + ["", f"impl {name} {{"]
                for m in range(r.randint(2, 5)):
                    out += self.method(fields, f"{self.ident()}_{m}") + [""]
                out[-1] = "}"
                out.append("")
            elif k < 8:
                out += self.enum(name) + [""]
            elif k < 9:
                t = f"{name}Source"
                out += [f"pub trait {t} {{",
                        f"    fn {self.word()}_key(&self) -> String;",
                        f"    fn weight(&self) -> u64 {{", "        1", "    }", "}", "",
                        f"pub fn heaviest<T: {t}>(items: &[T]) -> Option<&T> {{",
                        "    items.iter().max_by_key(|i| i.weight())", "}", ""]
            else:
                out += ["#[cfg(test)]", f"mod tests_{n} {{", "    use super::*;", "",
                        "    #[test]", f"    fn {self.ident()}_works() {{",
                        f"        let e = Error::Missing(\"{self.word()}\".into());",
                        "        assert!(e.to_string().starts_with(\"missing\"));",
                        "    }", "}", ""]
        return "\n".join(out) + "\n"


def fixtures(kind):
    """Single-file fixtures (stand-alone) of the given extensions, sorted."""
    out = []
    for p in sorted((REPO / "fixtures").rglob("*")):
        if p.is_file() and p.suffix in kind and p.parent.parent == REPO / "fixtures":
            out.append(p)
    return out


def deployment(rng, name):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels:
    app: {name}
spec:
  replicas: {rng.randint(1, 6)}
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
        - name: {name}
          image: registry.example.com/{name}:{rng.randint(1, 40)}.{rng.randint(0, 20)}.0
          ports:
            - containerPort: {rng.choice([8080, 8081, 9090, 3000])}
          env:
            - name: RUST_LOG
              value: info
            - name: DATABASE_URL
              valueFrom:
                secretKeyRef:
                  name: {name}-db
                  key: url
          resources:
            requests:
              cpu: {rng.randint(100, 900)}m
              memory: {rng.choice([128, 256, 512])}Mi
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--lines", type=int, default=1_000_000, help="lines of Rust (about)")
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--relevant", type=float, default=0.03,
                    help="share of the lines that use known APIs (fixtures)")
    ap.add_argument("--yaml", type=int, default=300, help="number of YAML files")
    a = ap.parse_args()

    rng = random.Random(a.seed)
    g = Gen(rng)
    if a.out.exists():
        shutil.rmtree(a.out)
    rs_fix = fixtures({".rs"})
    yaml_fix = fixtures({".yml", ".yaml"})
    fix_text = [(p, p.read_text()) for p in rs_fix]

    lines = 0
    relevant_lines = 0
    files = 0
    krate = 0
    fix_i = 0
    while lines < a.lines:
        root = a.out / f"svc_{krate:04}"
        src = root / "src"
        src.mkdir(parents=True)
        (root / "Cargo.toml").write_text(
            f'[package]\nname = "svc-{krate:04}"\nversion = "0.1.0"\nedition = "2021"\n\n'
            '[dependencies]\ntracing = "0.1"\n')
        mods = []
        crate_lines = 0
        for m in range(rng.randint(6, 30)):
            if lines >= a.lines:
                break
            text = g.module(rng.randint(150, 700))
            (src / f"m{m:02}.rs").write_text(text)
            mods.append(f"m{m:02}")
            lines += text.count("\n")
            crate_lines += text.count("\n")
            files += 1
        # About a third of the crates are services with handlers using known APIs.
        if rng.random() < 0.35 and relevant_lines < a.relevant * a.lines:
            (src / "handlers").mkdir()
            hmods = []
            handler_lines = 0
            h = 0
            while handler_lines < crate_lines * a.relevant / 0.35:
                p, text = fix_text[fix_i % len(fix_text)]
                fix_i += 1
                (src / "handlers" / f"h{h}.rs").write_text(text)
                hmods.append(f"pub mod h{h};")
                n = text.count("\n")
                h += 1
                handler_lines += n
                lines += n
                relevant_lines += n
                files += 1
            (src / "handlers.rs").write_text("\n".join(hmods) + "\n")
            mods.append("handlers")
        (src / "lib.rs").write_text("".join(f"pub mod {m};\n" for m in mods))
        files += 1
        lines += len(mods)
        krate += 1

    for y in range(a.yaml):
        d = a.out / f"svc_{rng.randrange(krate):04}" / "deploy"
        d.mkdir(exist_ok=True)
        if y % 3 == 0 and yaml_fix:
            p = yaml_fix[(y // 3) % len(yaml_fix)]
            (d / f"y{y:03}{p.suffix}").write_text(p.read_text())
        else:
            (d / f"y{y:03}.yaml").write_text(deployment(rng, f"svc-{y}"))

    print(f"{a.out}: {krate} crates, {files} .rs files, {lines} lines of Rust "
          f"({relevant_lines} using known APIs, {100 * relevant_lines / max(lines, 1):.1f}%), "
          f"{a.yaml} YAML files", file=sys.stderr)


if __name__ == "__main__":
    main()
