//! Panics inside codelets: the engine catches them and reports them as
//! [`EngineError::VertexFailed`](super::EngineError::VertexFailed), so the default panic hook
//! must not also print a message and a backtrace from an engine thread. A process-wide hook,
//! installed once, stays silent on a thread while it runs a vertex under [`quietly`] and
//! remembers where the panic happened for the error; everywhere else it calls the hook that was
//! installed before it.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the hook (once per process); called when an engine is built.
pub(super) fn install() {
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

/// Runs `f`, catching a panic silently; the panic becomes `Err(message)`, with where it
/// happened when known.
#[inline]
pub(super) fn quietly<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    let was = QUIET.with(|q| q.replace(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.map_err(message)
}

#[cold]
#[inline(never)]
fn message(p: Box<dyn std::any::Any + Send>) -> String {
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
