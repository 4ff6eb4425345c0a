//! Placeholder: filled by a helper (issue 32, parts 2 and 3).
