//! The arena core under both APIs (the C entry points and the safe `Arena`): pages,
//! the slow path, the kind and phase counters the inline fast path adds to, and the registry of
//! live arenas. It holds no process-wide state but that registry, and knows nothing of files.

pub(crate) mod by_phase;
pub(crate) mod kinds;
pub(crate) mod phases;
pub(crate) mod raw;
pub(crate) mod registry;
pub(crate) mod reuse;
pub(crate) mod slots;
