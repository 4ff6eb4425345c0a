//! Tax reports: the EU One-Stop-Shop quarterly return and a tax summary per country and
//! period, from the orders' tax breakdowns and their refunds'.
