//! [`Shared`]: a reference-counted value like `std::sync::Arc`, whose constructor can fail.
//!
//! An arena's schema is shared by every arena with the same names, and by the stats log that
//! records them. `Arc::new` aborts the process when memory runs out (stable Rust has no
//! `Arc::try_new`), and its failure path links the standard library's panic machinery into
//! every JIT; [`Shared::try_new`] returns the value instead.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// A shared, immutable value, freed when its last clone is dropped. Comparisons, hashing and
/// formatting look at the value, as `Arc`'s do.
pub struct Shared<T> {
    inner: NonNull<Inner<T>>,
}

struct Inner<T> {
    /// Clones alive.
    count: AtomicUsize,
    value: T,
}

// SAFETY: as `Arc<T>`: the value is shared between threads (`Sync` needed to read it from
// several, `Send` because the last clone, on any thread, drops it), and the count is atomic.
unsafe impl<T: Send + Sync> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The value, shared; `Err(value)` back when the memory for it cannot be had.
    pub fn try_new(value: T) -> Result<Shared<T>, T> {
        let inner = Inner {
            count: AtomicUsize::new(1),
            value,
        };
        match crate::fallible::boxed_or_back(inner) {
            Ok(inner) => Ok(Shared {
                inner: NonNull::from(Box::leak(inner)),
            }),
            Err(inner) => Err(inner.value),
        }
    }

    /// The value, shared; aborts the process, as `Arc::new` does, when memory runs out (for
    /// the tools; what a JIT calls uses [`Shared::try_new`]).
    pub fn new(value: T) -> Shared<T> {
        let inner = Box::new(Inner {
            count: AtomicUsize::new(1),
            value,
        });
        Shared {
            inner: NonNull::from(Box::leak(inner)),
        }
    }

    /// Whether `a` and `b` are clones of one value.
    pub fn ptr_eq(a: &Shared<T>, b: &Shared<T>) -> bool {
        a.inner == b.inner
    }

    /// The address of the shared value (the same for every clone).
    pub fn as_ptr(this: &Shared<T>) -> *const T {
        &this.inner().value
    }

    fn inner(&self) -> &Inner<T> {
        // SAFETY: the allocation lives while any clone does, and this is one.
        unsafe { self.inner.as_ref() }
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        // Relaxed, as `Arc`: a new clone is made from an existing one, which keeps the value
        // alive; only the drop of the last one needs to see every other.
        let before = self.inner().count.fetch_add(1, Ordering::Relaxed);
        if before > isize::MAX as usize {
            std::process::abort(); // as `Arc`: a count this high means clones are leaked
        }
        Shared { inner: self.inner }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        if self.inner().count.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        // Every other clone's use of the value happens before its drop (Release above);
        // this Acquire makes them visible before the value is freed, as in `Arc`.
        fence(Ordering::Acquire);
        // SAFETY: this was the last clone: the allocation, made by a `Box`, is no longer
        // reachable from any other and is freed once, here.
        drop(unsafe { Box::from_raw(self.inner.as_ptr()) });
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner().value
    }
}

impl<T> AsRef<T> for Shared<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T: Default> Default for Shared<T> {
    fn default() -> Shared<T> {
        Shared::new(T::default())
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Shared<T>) -> bool {
        Shared::ptr_eq(self, other) || **self == **other
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Shared<T> {
        Shared::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    struct Counted<'a>(&'a AtomicU32);

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn the_value_is_dropped_once_with_its_last_clone_on_any_thread() {
        let drops = AtomicU32::new(0);
        let a = Shared::try_new(Counted(&drops)).ok().expect("memory");
        let clones: Vec<_> = (0..8).map(|_| a.clone()).collect();
        assert!(Shared::ptr_eq(&a, &clones[3]));
        std::thread::scope(|s| {
            for c in clones {
                s.spawn(move || drop(c));
            }
        });
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(a);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn values_compare_hash_and_print_as_the_value() {
        let (a, b) = (
            Shared::new(String::from("x")),
            Shared::new(String::from("x")),
        );
        assert!(a == b && !Shared::ptr_eq(&a, &b));
        assert_eq!(format!("{a:?}"), "\"x\"");
        let set: std::collections::HashSet<_> = [a, b].into_iter().collect();
        assert_eq!(set.len(), 1);
    }
}
