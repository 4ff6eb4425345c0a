//! How tax amounts are rounded. Filled by the tax engine work.
