//! Where a sale is taxed and under which scheme (the built-in rules' jurisdiction
//! decision). Filled by the tax engine work.
