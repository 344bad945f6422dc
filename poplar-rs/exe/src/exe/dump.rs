//! A stable, readable text form of an executable, for golden tests and for people.

use std::fmt::Write;

use super::{ComputePhase, ExchangePhase, Executable, Step};

impl Executable {
    /// The program `index` as indented steps, followed by the exchange and compute phases it
    /// uses. Offsets are shown as `tile:offset`.
    pub fn describe_program(&self, index: usize) -> String {
        let mut out = String::new();
        if let Some(p) = self.programs.get(index) {
            self.step(p, 0, &mut out);
        }
        out
    }

    /// Step `s` and what it contains, indented by `depth`.
    fn step(&self, s: &Step, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        match s {
            Step::Seq(v) => v.iter().for_each(|c| self.step(c, depth, out)),
            Step::Label { name, body } => {
                let _ = writeln!(out, "{pad}label {name}");
                self.step(body, depth + 1, out);
            }
            Step::Sync(k) => {
                let _ = writeln!(out, "{pad}sync {k:?}");
            }
            Step::Exchange(i) => self.exchange_lines(&self.exchanges[*i], &pad, out),
            Step::Compute(i) => self.compute_lines(&self.computes[*i], &pad, out),
            Step::Repeat { count, body } => {
                let _ = writeln!(out, "{pad}repeat {count}");
                self.step(body, depth + 1, out);
            }
            Step::While {
                cond,
                predicate,
                body,
            } => {
                let _ = writeln!(out, "{pad}while {}:{}", predicate.tile, predicate.offset);
                let _ = writeln!(out, "{pad} cond");
                self.step(cond, depth + 1, out);
                let _ = writeln!(out, "{pad} body");
                self.step(body, depth + 1, out);
            }
            Step::If {
                predicate,
                then,
                else_,
            } => {
                let _ = writeln!(out, "{pad}if {}:{}", predicate.tile, predicate.offset);
                self.step(then, depth + 1, out);
                let _ = writeln!(out, "{pad}else");
                self.step(else_, depth + 1, out);
            }
            Step::Switch {
                control,
                cases,
                default,
            } => {
                let _ = writeln!(out, "{pad}switch {}:{}", control.tile, control.offset);
                for (v, c) in cases {
                    let _ = writeln!(out, "{pad}case {v}");
                    self.step(c, depth + 1, out);
                }
                let _ = writeln!(out, "{pad}default");
                self.step(default, depth + 1, out);
            }
            Step::Call(f) => {
                let _ = writeln!(out, "{pad}call {f}");
            }
            Step::StreamIn { stream, runs } => {
                let _ = writeln!(
                    out,
                    "{pad}stream-in '{}' {} runs",
                    self.streams[*stream as usize].name,
                    runs.len()
                );
            }
            Step::Remote(i) => {
                let c = &self.remote_copies[*i];
                let b = &self.remote_buffers[c.buffer];
                let rows = match &c.rows {
                    super::RowSelect::Consecutive { first, count } => {
                        format!("rows {first}+{count}")
                    }
                    super::RowSelect::Offsets(o) => format!("{} rows at offsets", o.len()),
                };
                let _ = writeln!(
                    out,
                    "{pad}remote {:?} '{}' {rows} {} runs",
                    c.dir,
                    b.name,
                    c.runs.len()
                );
            }
            Step::OverlapIo { io, compute } => {
                let _ = writeln!(out, "{pad}overlap-io");
                self.step(io, depth + 1, out);
                let _ = writeln!(out, "{pad}with");
                self.step(compute, depth + 1, out);
            }
            Step::StreamOut { stream, runs } => {
                let _ = writeln!(
                    out,
                    "{pad}stream-out '{}' {} runs",
                    self.streams[*stream as usize].name,
                    runs.len()
                );
            }
        }
    }

    /// An exchange step: the phase's name, then one line per transfer, `src -> dsts`.
    fn exchange_lines(&self, x: &ExchangePhase, pad: &str, out: &mut String) {
        let _ = writeln!(out, "{pad}exchange '{}'", x.name);
        for t in &x.transfers {
            let dsts: Vec<String> = t.dsts.iter().map(|(d, o)| format!("{d}:{o}")).collect();
            let _ = writeln!(
                out,
                "{pad}  {}:{} {}B -> {}",
                t.src_tile,
                t.src_offset,
                t.bytes,
                dsts.join(" ")
            );
        }
    }

    /// A compute step: the phase's name, then one line per tile: its pre-copies, vertices
    /// (codelet and fields) and post-copies.
    fn compute_lines(&self, c: &ComputePhase, pad: &str, out: &mut String) {
        let _ = writeln!(out, "{pad}compute '{}'", c.name);
        for t in &c.tiles {
            let mut parts = Vec::new();
            for cp in &t.pre_copies {
                parts.push(format!("pre {}->{} {}B", cp.src, cp.dst, cp.bytes));
            }
            for v in &t.vertices {
                let fields: Vec<String> = v
                    .fields
                    .iter()
                    .map(|f| format!("{}+{}", f.offset, f.len))
                    .collect();
                parts.push(format!(
                    "{}[{}]",
                    self.codelets[v.codelet].name,
                    fields.join(",")
                ));
            }
            for cp in &t.post_copies {
                parts.push(format!("post {}->{} {}B", cp.src, cp.dst, cp.bytes));
            }
            let _ = writeln!(out, "{pad}  tile {}: {}", t.tile, parts.join("; "));
        }
    }
}
