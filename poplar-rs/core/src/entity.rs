//! Typed entity ids and the dense maps they index (after cranelift's `entity` crate).
//!
//! An id is a `u32` newtype declared with `entity_id!` (the framework's crates only); a [`PrimaryMap`]
//! owns the entities of one kind and hands out their ids, and can be indexed only by its own id
//! type, so a compute-phase id can never index the exchange phases, and no `.0 as usize` appears
//! outside this module. Ids serialize as plain integers and maps as plain arrays, so file formats
//! do not change when a `Vec` becomes a map. A [`TileMap`] is the same for per-tile tables,
//! indexed by [`TileId`].

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::target::TileId;

/// A typed index into a [`PrimaryMap`].
pub trait EntityId: Copy + Eq + Ord + std::hash::Hash + fmt::Debug {
    /// The id of the `index`-th entity. Panics if `index` does not fit in `u32` (a map never
    /// holds that many entities: [`PrimaryMap::push`] checks).
    fn new(index: usize) -> Self;
    /// The position of the entity in its map.
    fn index(self) -> usize;
}

/// Declares a `u32` entity id type: `entity_id!(pub struct ComputePhaseId, "cp");` gives a
/// `Copy` newtype that prints as `cp7`, serializes as `7`, and implements [`EntityId`].
/// Exported for the framework's own crates only (hidden from the docs, not part of the API).
#[doc(hidden)]
#[macro_export]
macro_rules! entity_id {
    ($(#[$m:meta])* $vis:vis struct $name:ident, $prefix:literal;) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        $vis struct $name(u32);

        impl $crate::entity::EntityId for $name {
            #[inline]
            fn new(index: usize) -> Self {
                $name(u32::try_from(index).expect("entity index fits in u32"))
            }
            #[inline]
            fn index(self) -> usize {
                self.0 as usize
            }
        }

        #[allow(dead_code, unreachable_pub)]
        impl $name {
            /// The id as a plain number (for messages and reports).
            #[inline]
            pub fn as_u32(self) -> u32 {
                self.0
            }
            /// The id with this number, for reading ids back from reports and files; a
            /// number beyond the map is caught where the id is used (`PrimaryMap::get`,
            /// `Executable::check`).
            #[inline]
            pub fn from_u32(n: u32) -> Self {
                $name(n)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}
#[doc(hidden)]
pub use crate::entity_id;

/// A dense map that owns entities of one kind, indexed only by `K`.
#[derive(Clone, PartialEq, Eq)]
pub struct PrimaryMap<K: EntityId, V> {
    items: Vec<V>,
    _key: PhantomData<K>,
}

impl<K: EntityId, V> PrimaryMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        PrimaryMap {
            items: Vec::new(),
            _key: PhantomData,
        }
    }
    /// An empty map with room for `n` entities.
    pub fn with_capacity(n: usize) -> Self {
        PrimaryMap {
            items: Vec::with_capacity(n),
            _key: PhantomData,
        }
    }
    /// Adds an entity and returns its id.
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.items.len());
        self.items.push(v);
        k
    }
    /// The entity `k`, or `None` if `k` is not an id of this map.
    pub fn get(&self, k: K) -> Option<&V> {
        self.items.get(k.index())
    }
    /// The entity `k` mutably, or `None` if `k` is not an id of this map.
    pub fn get_mut(&mut self, k: K) -> Option<&mut V> {
        self.items.get_mut(k.index())
    }
    /// The last entity added, mutably.
    pub fn last_mut(&mut self) -> Option<&mut V> {
        self.items.last_mut()
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// The ids, in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = K> + DoubleEndedIterator + Clone {
        (0..self.items.len()).map(K::new)
    }
    /// The entities, in id order.
    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.items.iter()
    }
    /// The entities mutably, in id order.
    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.items.iter_mut()
    }
    /// `(id, entity)` pairs in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (K, &V)> + DoubleEndedIterator {
        self.items.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }
    /// `(id, entity)` pairs in order, mutably.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (K, &mut V)> {
        self.items
            .iter_mut()
            .enumerate()
            .map(|(i, v)| (K::new(i), v))
    }
    /// The entities as a slice in id order (for bulk reads; position `i` is `K::new(i)`).
    pub fn as_slice(&self) -> &[V] {
        &self.items
    }
    /// The entities as a vector in id order.
    pub fn into_vec(self) -> Vec<V> {
        self.items
    }
}

impl<K: EntityId, V> Default for PrimaryMap<K, V> {
    fn default() -> Self {
        PrimaryMap::new()
    }
}

impl<K: EntityId, V> From<Vec<V>> for PrimaryMap<K, V> {
    fn from(items: Vec<V>) -> Self {
        assert!(
            u32::try_from(items.len()).is_ok(),
            "entity count fits in u32"
        );
        PrimaryMap {
            items,
            _key: PhantomData,
        }
    }
}

impl<K: EntityId, V> FromIterator<V> for PrimaryMap<K, V> {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        PrimaryMap::from(iter.into_iter().collect::<Vec<V>>())
    }
}

impl<K: EntityId, V> Index<K> for PrimaryMap<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}

impl<K: EntityId, V> IndexMut<K> for PrimaryMap<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

impl<'a, K: EntityId, V> IntoIterator for &'a PrimaryMap<K, V> {
    type Item = &'a V;
    type IntoIter = std::slice::Iter<'a, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<K: EntityId, V: fmt::Debug> fmt::Debug for PrimaryMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: EntityId, V: Serialize> Serialize for PrimaryMap<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.items.serialize(s)
    }
}

impl<'de, K: EntityId, V: Deserialize<'de>> Deserialize<'de> for PrimaryMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<V>::deserialize(d)?;
        if u32::try_from(items.len()).is_err() {
            return Err(serde::de::Error::custom(
                "more entities than fit in u32 ids",
            ));
        }
        Ok(PrimaryMap {
            items,
            _key: PhantomData,
        })
    }
}

/// A dense table with one entry for every tile of a target, indexed by [`TileId`] (the
/// compiler's per-tile tables), so that no `tile as usize` appears where it is used.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TileMap<V> {
    items: Vec<V>,
}

impl<V> TileMap<V> {
    /// One entry per tile, `f(tile)` each.
    pub fn from_fn(tiles: u32, f: impl FnMut(TileId) -> V) -> Self {
        TileMap {
            items: TileId::range(0, tiles).into_iter().map(f).collect(),
        }
    }

    /// One entry per tile, `v` each.
    pub fn filled(tiles: u32, v: V) -> Self
    where
        V: Clone,
    {
        TileMap {
            items: vec![v; tiles as usize],
        }
    }

    /// The number of tiles.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The entry of `tile`, if the table has that tile.
    pub fn get(&self, tile: TileId) -> Option<&V> {
        self.items.get(tile.index())
    }

    /// Every tile and its entry, in tile order.
    pub fn iter(&self) -> impl Iterator<Item = (TileId, &V)> {
        self.items
            .iter()
            .enumerate()
            .map(|(t, v)| (TileId::new(t as u32), v))
    }

    /// Every tile and its entry, in tile order, mutably.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (TileId, &mut V)> {
        self.items
            .iter_mut()
            .enumerate()
            .map(|(t, v)| (TileId::new(t as u32), v))
    }

    /// Every entry, in tile order.
    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.items.iter()
    }

    /// Every entry, in tile order, mutably.
    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.items.iter_mut()
    }
}

impl<V> Index<TileId> for TileMap<V> {
    type Output = V;
    #[inline]
    fn index(&self, tile: TileId) -> &V {
        &self.items[tile.index()]
    }
}

impl<V> IndexMut<TileId> for TileMap<V> {
    #[inline]
    fn index_mut(&mut self, tile: TileId) -> &mut V {
        &mut self.items[tile.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    entity_id!(
        /// Test id A.
        struct A, "a";
    );
    entity_id!(
        /// Test id B.
        struct B, "b";
    );

    #[test]
    fn a_tile_map_has_one_entry_per_tile_in_tile_order() {
        let mut m = TileMap::from_fn(4, |t| t.as_u32() * 10);
        m[TileId::new(2)] += 1;
        assert_eq!(m.len(), 4);
        assert_eq!(
            m.iter().map(|(t, v)| (t.as_u32(), *v)).collect::<Vec<_>>(),
            [(0, 0), (1, 10), (2, 21), (3, 30)]
        );
        assert_eq!((m.get(3.into()), m.get(4.into())), (Some(&30), None));
        for (t, v) in m.iter_mut() {
            *v -= t.as_u32() * 10;
        }
        assert_eq!(m.values().copied().collect::<Vec<_>>(), [0, 0, 1, 0]);
        // `m[2]` does not compile: a TileMap is indexed by TileId only.
        assert_eq!(TileMap::filled(2, 'x'), TileMap::from_fn(2, |_| 'x'));
    }

    #[test]
    fn ids_index_only_their_own_map_and_serialize_as_numbers() {
        let mut m: PrimaryMap<A, &str> = PrimaryMap::new();
        let x = m.push("x");
        let y = m.push("y");
        assert_eq!((m[x], m[y]), ("x", "y"));
        assert_eq!(format!("{y}"), "a1");
        assert!(m.get(A::from_u32(2)).is_none());
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"["x","y"]"#);
        assert_eq!(serde_json::to_string(&y).unwrap(), "1");
        let back: PrimaryMap<A, String> = serde_json::from_str(r#"["p","q","r"]"#).unwrap();
        assert_eq!(
            back.keys().map(A::as_u32).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        let mut n: PrimaryMap<B, u8> = PrimaryMap::new();
        let b = n.push(3);
        assert_eq!(n[b], 3);
        // `m[b]` does not compile: PrimaryMap<A, _> implements Index<A> only.
    }
}
