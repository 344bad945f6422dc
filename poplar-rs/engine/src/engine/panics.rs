//! Panics inside codelets: the engine catches them and reports them as
//! [`EngineError::VertexFailed`](super::EngineError::VertexFailed), so the default panic hook
//! must not also print a message and a backtrace from an engine thread. A process-wide hook,
//! installed once, stays silent on a thread while it runs a task of a compute phase ([`Quiet`]) and
//! remembers where the panic happened for the error; everywhere else it calls the hook that was
//! installed before it.

use std::cell::{Cell, RefCell};
use std::panic;
use std::sync::Once;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the hook (once per process); called when an engine is built.
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                LOCATION.with(|l| *l.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// While alive, panics on this thread are silent (their location is kept for [`message`]).
/// Set once per task of a compute phase, not per vertex: a thread-local write per vertex cost
/// ~10 % of a superstep of empty vertices.
pub(crate) struct Quiet {
    was: bool,
}

impl Quiet {
    #[inline]
    pub(crate) fn begin() -> Quiet {
        Quiet {
            was: QUIET.with(|q| q.replace(true)),
        }
    }
}

impl Drop for Quiet {
    #[inline]
    fn drop(&mut self) {
        QUIET.with(|q| q.set(self.was));
    }
}

#[cold]
#[inline(never)]
/// The message of a caught panic, with where it happened when known.
pub(crate) fn message(p: Box<dyn std::any::Any + Send>) -> String {
    {
        let msg = if let Some(s) = p.downcast_ref::<&str>() {
            format!("panicked: {s}")
        } else if let Some(s) = p.downcast_ref::<String>() {
            format!("panicked: {s}")
        } else {
            "panicked".to_string()
        };
        match LOCATION.with(|l| l.borrow_mut().take()) {
            Some(at) => format!("{msg} (at {at})"),
            None => msg,
        }
    }
}
