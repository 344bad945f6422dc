//! Codelets: the code that vertices run, written as Rust types and registered by name.
//!
//! A codelet is declared with the [`codelet!`](crate::codelet!) macro, which produces a struct
//! whose fields are borrowed views of tile memory (`&[f32]`, `&mut [f32]`, scalars, lists of
//! vectors) and registers it with [`inventory`] under a unique name. Its behaviour is the
//! [`Vertex`] trait:
//!
//! ```
//! use poplar_core::codelet::*;
//!
//! poplar_core::codelet! {
//!     /// `out[i] = a[i] * k`
//!     pub struct Scale as "doc::Scale" {
//!         a: Input<Vector<f32>>,
//!         out: Output<Vector<f32>>,
//!         k: State<f32>,
//!     }
//! }
//! impl Vertex for Scale<'_> {
//!     fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
//!         for (o, a) in self.out.iter_mut().zip(self.a.iter()) {
//!             *o = a * self.k;
//!         }
//!         Ok(())
//!     }
//! }
//! ```
//!
//! The contract: `compute` may only touch its fields; inputs are read-only; the compiler rejects
//! graphs where a written field overlaps another field of the same vertex or a field of another
//! vertex of the same compute set, so the borrows the macro hands out never alias. A codelet that
//! cannot proceed returns a [`VertexError`]; a panic is caught and reported the same way.

mod field;
mod hint;
mod registry;
pub mod rounding;

pub use field::*;
pub use hint::prefetch;
// For the engine crate only (its exchange loop and look-ahead), not part of the API.
#[doc(hidden)]
pub use hint::{prefetch_ptr, set_progress_hook, ProgressHook};

pub use registry::*;
pub use rounding::to_f16;

/// Declares a codelet: a struct of fields bound to tile memory, registered under a name.
///
/// Syntax: `[attrs] vis struct Name as "registered name" [, multi_worker] { field: Kind, ... }`
/// where each `Kind` is `Input<T>`, `Output<T>`, `InOut<T>` or `State<T>`, and `T` is an
/// element type (`f32`, `i32`, `u32`, `u16`, `u8`, `bool`), `Vector<E>` or `VectorList<E>` (not
/// for State). The type must also implement [`Vertex`].
///
/// **Multi-worker codelets.** A tile has several hardware worker contexts
/// (`Target::workers_per_tile`, six on a GC200). By default a vertex runs once, on one worker,
/// and the cycle model lets the vertices of a tile share the workers. With `multi_worker` the
/// engine calls `compute` once per worker context of the tile, each with its own
/// [`Worker`] (`id` in `0..count`); the codelet splits its work by `worker.id` (for example
/// elements `id, id + count, …`) and its cycle estimate is one worker's share. The calls of one
/// vertex run one after another on the host, so a multi-worker codelet must give the same
/// result whatever the order of its workers (disjoint writes per worker).
///
/// What the macro adds to `Name`: `Name::NAME`, the registered name (use it with
/// `Graph::add_vertex`, or use
/// `Graph::add_vertex_of::<Name>`); one associated constant per
/// field with the field's name and its index (`Name::out`), for
/// [`CycleCtx::elements`] in `cycles()`, so that a renamed or reordered field is a compile
/// error, not a wrong estimate; and an implementation of [`Codelet`].
///
/// Misuse gets errors that say what is allowed: an unknown flag
/// ```compile_fail
/// poplar::codelet! { pub struct A as "doc::A", multiworker { x: poplar::codelet::Input<f32> } }
/// ```
/// and an element type a field cannot hold (f64 is not a chip type)
/// ```compile_fail
/// poplar::codelet! { pub struct B as "doc::B" { x: poplar::codelet::Input<f64> } }
/// ```
#[macro_export]
macro_rules! codelet {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident as $cname:literal $(, $mw:ident)? {
            $( $(#[$fmeta:meta])* $field:ident : $fty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[allow(dead_code)]
        $vis struct $name<'a> {
            $( $(#[$fmeta])* pub $field: <$fty as $crate::codelet::Field>::Ref<'a>, )*
            #[doc(hidden)]
            pub __tile: ::std::marker::PhantomData<&'a mut [u8]>,
        }

        #[allow(non_upper_case_globals, dead_code)]
        impl $name<'_> {
            /// The name this codelet is registered under.
            pub const NAME: &'static str = $cname;
            #[doc(hidden)]
            pub const __FIELD_NAMES: &'static [&'static str] = &[$(stringify!($field)),*];
            $(
                #[doc = concat!("Index of field `", stringify!($field), "` (for `CycleCtx`).")]
                pub const $field: usize =
                    $crate::codelet::field_position(Self::__FIELD_NAMES, stringify!($field));
            )*
        }

        impl $crate::codelet::Codelet for $name<'_> {
            const NAME: &'static str = $cname;
        }

        const _: () = {
            const FIELDS: &[$crate::codelet::FieldSpec] = &[
                $( $crate::codelet::FieldSpec::of::<$fty>(stringify!($field)), )*
            ];

            fn __compute(
                io: &$crate::codelet::VertexIo<'_>,
                worker: $crate::codelet::Worker,
            ) -> ::std::result::Result<(), $crate::codelet::VertexError> {
                let mut __index = 0usize;
                #[allow(unused_assignments)]
                let mut vertex = $name {
                    $( $field: {
                        let i = __index;
                        __index += 1;
                        // SAFETY: every field index is bound exactly once here, so the borrows
                        // are distinct; the compiler verified (and `Engine::new` re-verifies for
                        // loaded executables) that field `i` is in bounds, aligned, of this
                        // kind, and that written fields overlap nothing else of this vertex.
                        unsafe { <$fty as $crate::codelet::Field>::bind(io, i) }
                    }, )*
                    __tile: ::std::marker::PhantomData,
                };
                <$name<'_> as $crate::codelet::Vertex>::compute(&mut vertex, worker)
            }

            fn __cycles(ctx: &$crate::codelet::CycleCtx<'_>) -> ::std::option::Option<u64> {
                <$name<'static> as $crate::codelet::Vertex>::cycles(ctx)
            }

            $crate::inventory::submit! {
                $crate::codelet::CodeletDesc {
                    name: $cname,
                    fields: FIELDS,
                    multi_worker: $crate::__codelet_multi_worker!($($mw)?),
                    compute: __compute,
                    cycles: __cycles,
                }
            }
        };
    };
}

/// [`codelet!`](crate::codelet!) under a name that is a macro only (the module `codelet` shares
/// the other), so that the façade can re-export the macro without the whole module.
#[doc(hidden)]
#[macro_export]
macro_rules! __codelet {
    ($($body:tt)*) => {
        $crate::codelet! { $($body)* }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __codelet_multi_worker {
    () => {
        false
    };
    (multi_worker) => {
        true
    };
    ($other:ident) => {
        ::std::compile_error!(::std::concat!(
            "unknown codelet flag `",
            ::std::stringify!($other),
            "`: the only flag is `multi_worker` (`struct Name as \"name\", multi_worker { … }`)"
        ))
    };
}

/// A codelet type declared with [`codelet!`](crate::codelet!): its registered name.
pub trait Codelet {
    /// The name it is registered under.
    const NAME: &'static str;
}

/// The position of `name` in `names` (for the field index constants of [`codelet!`]); a name
/// that is not there is a compile-time error.
pub const fn field_position(names: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < names.len() {
        let (a, b) = (names[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("no such field")
}
