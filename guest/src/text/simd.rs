//! Sixteen bytes at a time: WebAssembly `simd128` vectors in the component, two 64-bit
//! words elsewhere (native builds and their tests).
//! The compiler alone does not turn byte reductions and lane masks into `simd128` (it
//! loads the bytes one by one), so the hot loops that need them are written with these.

/// Sixteen bytes.
#[derive(Clone, Copy, Debug)]
pub struct Lanes(Inner);

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type Inner = core::arch::wasm32::v128;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
type Inner = [u64; 2];

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod imp {
    use super::Lanes;
    use core::arch::wasm32 as w;

    impl Lanes {
        /// The bytes of `a`, as two 64-bit loads. A vector built from sixteen bytes is
        /// one vector load only while nothing else reads them: vectors at `p` and `p + 1`
        /// are compiled into byte loads and sixteen lane inserts each (four times slower
        /// in the sniff's scan).
        #[inline(always)]
        pub fn load(a: &[u8; 16]) -> Lanes {
            let (lo, hi) = a.split_at(8);
            let word = |h: &[u8]| u64::from_le_bytes(h.try_into().unwrap_or([0; 8]));
            Lanes(w::u64x2(word(lo), word(hi)))
        }
        /// `b` in every lane.
        #[inline(always)]
        pub fn splat(b: u8) -> Lanes {
            Lanes(w::u8x16_splat(b))
        }
        /// 0xFF where the lanes are equal, else 0.
        #[inline(always)]
        pub fn eq(self, o: Lanes) -> Lanes {
            Lanes(w::u8x16_eq(self.0, o.0))
        }
        #[inline(always)]
        pub fn or(self, o: Lanes) -> Lanes {
            Lanes(w::v128_or(self.0, o.0))
        }
        #[inline(always)]
        pub fn and(self, o: Lanes) -> Lanes {
            Lanes(w::v128_and(self.0, o.0))
        }
        /// Whether any bit is set.
        #[inline(always)]
        pub fn any(self) -> bool {
            w::v128_any_true(self.0)
        }
        /// The top bit of each lane, lane 0 in bit 0.
        #[inline(always)]
        pub fn top_bits(self) -> u16 {
            w::u8x16_bitmask(self.0)
        }
        /// Each lane shifted right by four bits (its high nibble).
        #[inline(always)]
        pub fn high_nibbles(self) -> Lanes {
            Lanes(w::u8x16_shr(self.0, 4))
        }
        /// `table`'s byte at each lane's value; every lane must be below 16.
        #[inline(always)]
        pub fn look_up_in(self, table: Lanes) -> Lanes {
            Lanes(w::i8x16_swizzle(table.0, self.0))
        }
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod imp {
    //! Two 64-bit words per vector, lanes little-endian, worked on with word arithmetic:
    //! `eq` sets the top bit of each equal lane (the other bits are zero), which is all
    //! `and`, `or`, `any` and `top_bits` look at.
    use super::Lanes;

    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const TOPS: u64 = 0x8080_8080_8080_8080;

    #[inline(always)]
    fn map2(a: [u64; 2], b: [u64; 2], f: impl Fn(u64, u64) -> u64) -> Lanes {
        Lanes([f(a[0], b[0]), f(a[1], b[1])])
    }

    /// The top bit of each zero byte of `x` (exact: no borrow crosses a byte).
    #[inline(always)]
    fn zero_bytes(x: u64) -> u64 {
        !(((x & LOW7) + LOW7) | x) & TOPS
    }

    /// The top bits of the eight bytes of `x`, byte 0 in bit 0.
    #[inline(always)]
    fn gather(x: u64) -> u16 {
        // Byte k's bit lands on bit 56 + k; the partial products never overlap.
        ((((x >> 7) & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u16
    }

    impl Lanes {
        /// The bytes of `a`.
        #[inline(always)]
        pub fn load(a: &[u8; 16]) -> Lanes {
            let (lo, hi) = a.split_at(8);
            let word = |h: &[u8]| u64::from_le_bytes(h.try_into().unwrap_or([0; 8]));
            Lanes([word(lo), word(hi)])
        }
        /// `b` in every lane.
        #[inline(always)]
        pub fn splat(b: u8) -> Lanes {
            Lanes([u64::from_ne_bytes([b; 8]); 2])
        }
        /// The top bit set where the lanes are equal, zero elsewhere.
        #[inline(always)]
        pub fn eq(self, o: Lanes) -> Lanes {
            map2(self.0, o.0, |a, b| zero_bytes(a ^ b))
        }
        #[inline(always)]
        pub fn or(self, o: Lanes) -> Lanes {
            map2(self.0, o.0, |a, b| a | b)
        }
        #[inline(always)]
        pub fn and(self, o: Lanes) -> Lanes {
            map2(self.0, o.0, |a, b| a & b)
        }
        /// Whether any bit is set.
        #[inline(always)]
        pub fn any(self) -> bool {
            self.0[0] | self.0[1] != 0
        }
        /// The top bit of each lane, lane 0 in bit 0.
        #[inline(always)]
        pub fn top_bits(self) -> u16 {
            gather(self.0[0]) | gather(self.0[1]) << 8
        }
        /// Each lane shifted right by four bits (its high nibble).
        #[inline(always)]
        pub fn high_nibbles(self) -> Lanes {
            Lanes(self.0.map(|x| (x >> 4) & 0x0F0F_0F0F_0F0F_0F0F))
        }
        /// `table`'s byte at each lane's value; every lane must be below 16.
        #[inline(always)]
        pub fn look_up_in(self, table: Lanes) -> Lanes {
            let (t, i) = (bytes(table), bytes(self));
            let out: [u8; 16] = core::array::from_fn(|k| t[usize::from(i[k] & 15)]);
            Lanes::load(&out)
        }
    }

    fn bytes(v: Lanes) -> [u8; 16] {
        let mut out = [0; 16];
        out[..8].copy_from_slice(&v.0[0].to_le_bytes());
        out[8..].copy_from_slice(&v.0[1].to_le_bytes());
        out
    }
}

/// The `k`-th 16 bytes of a 64-byte block.
#[inline(always)]
pub fn quarter(block: &[u8; 64], k: usize) -> &[u8; 16] {
    let (q, _) = block[k * 16..]
        .split_first_chunk::<16>()
        .unwrap_or((&[0; 16], &[]));
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_operations() {
        let a: [u8; 16] = core::array::from_fn(|i| i as u8 * 17);
        let v = Lanes::load(&a);
        assert_eq!(v.eq(Lanes::splat(34)).top_bits(), 1 << 2);
        assert_eq!(v.eq(Lanes::splat(1)).top_bits(), 0);
        assert!(!v.eq(Lanes::splat(1)).any());
        assert!(v.eq(Lanes::splat(34)).any());
        // Lanes 8.. hold 136 and up: their top bits are set.
        assert_eq!(v.top_bits(), 0xFF00);
        assert_eq!(v.or(Lanes::splat(0x80)).top_bits(), 0xFFFF);
        assert_eq!(v.and(Lanes::splat(0x7F)).top_bits(), 0);
        let block: [u8; 64] = core::array::from_fn(|i| i as u8);
        assert_eq!(quarter(&block, 3)[0], 48);
    }

    #[test]
    fn nibbles_and_table_lookups_agree_with_bytewise_ones() {
        let table: [u8; 16] = core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0xA5);
        for start in 0..=255u8 {
            let a: [u8; 16] =
                core::array::from_fn(|i| start.wrapping_add((i as u8).wrapping_mul(61)));
            let v = Lanes::load(&a);
            let high = v.high_nibbles();
            let low = v.and(Lanes::splat(0x0F));
            for (k, &b) in a.iter().enumerate() {
                let want_high: [u8; 16] = core::array::from_fn(|i| a[i] >> 4);
                let want_low: [u8; 16] = core::array::from_fn(|i| table[usize::from(a[i] & 15)]);
                let one = |x: Lanes, y: u8| x.eq(Lanes::splat(y)).top_bits() >> k & 1 == 1;
                assert!(one(high, want_high[k]), "{b}");
                assert!(one(low.look_up_in(Lanes::load(&table)), want_low[k]), "{b}");
            }
        }
    }

    #[test]
    fn equality_masks_agree_with_bytewise_comparison() {
        // Every pair of byte values, in every lane, with other lanes unequal or equal.
        for x in 0..=255u8 {
            let mut a = [0u8; 16];
            for (i, b) in a.iter_mut().enumerate() {
                *b = x.wrapping_add((i as u8).wrapping_mul(37));
            }
            for y in 0..=255u8 {
                let want = a
                    .iter()
                    .enumerate()
                    .fold(0u16, |m, (i, &b)| m | u16::from(b == y) << i);
                let e = Lanes::load(&a).eq(Lanes::splat(y));
                assert_eq!(e.top_bits(), want, "{x} {y}");
                assert_eq!(e.any(), want != 0);
                let high = a
                    .iter()
                    .enumerate()
                    .fold(0u16, |m, (i, &b)| m | u16::from(b >> 7) << i);
                assert_eq!(Lanes::load(&a).top_bits(), high);
            }
        }
    }
}
