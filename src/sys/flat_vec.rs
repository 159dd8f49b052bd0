//! Reinterpreting a vector of (stamp, value) pairs as the flat signed vector `--raw`
//! rows are kept in, without a copy: at 10^7 samples a copy doubled the peak memory.

/// The pairs' values in order, in the same allocation (`[u64; 2]` and two `i64` share
/// size and alignment). Values above `i64::MAX` wrap; stamps and latencies in ns are far
/// below it.
pub fn flatten_pairs(pairs: Vec<[u64; 2]>) -> Vec<i64> {
    let mut pairs = std::mem::ManuallyDrop::new(pairs);
    let (ptr, len, cap) = (pairs.as_mut_ptr(), pairs.len(), pairs.capacity());
    // SAFETY: the allocation of `cap` `[u64; 2]` (16 bytes, align 8) has the same layout
    // as `2 * cap` `i64` (8 bytes, align 8); every bit pattern of u64 is a valid i64; the
    // original Vec is never used or dropped again (ManuallyDrop), so the new one owns it.
    unsafe { Vec::from_raw_parts(ptr.cast::<i64>(), len * 2, cap * 2) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pairs_become_the_flat_values_in_order() {
        let mut v = Vec::with_capacity(5);
        v.extend([[1u64, 2], [3, 4]]);
        let flat = super::flatten_pairs(v);
        assert_eq!(flat, [1, 2, 3, 4]);
        assert_eq!(flat.capacity(), 10);
        assert!(super::flatten_pairs(Vec::new()).is_empty());
    }
}
