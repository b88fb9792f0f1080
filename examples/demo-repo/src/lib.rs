//! A tiny calculator.

/// Adds two numbers.
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Subtracts `b` from `a`.
pub fn sub(a: i64, b: i64) -> i64 {
    a - b
}
