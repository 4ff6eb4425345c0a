//! Table tests of the rounding rule (`rounding.rs`): exclusive and inclusive tax on the
//! plan's figures, half away from zero at x.5 both ways, credits mirroring charges, the
//! largest-remainder spread (exact sums, ties to the earlier line, signs) and why a group is
//! rounded on its total and not per line.

use super::*;

const DE: u32 = 190_000;

#[test]
fn exclusive_tax_is_the_net_times_the_rate_rounded_half_away_from_zero() {
    for (net, ppm, tax) in [
        (1000, DE, 190),
        (250, DE, 48),   // 47.5 → 48
        (-250, DE, -48), // −47.5 → −48, not −47
        (249, DE, 47),   // 47.31
        (-249, DE, -47),
        (1, DE, 0),         // 0.19
        (3, DE, 1),         // 0.57
        (-3, DE, -1),       // −0.57
        (100, 255_000, 26), // 25.5 → 26
        (-100, 255_000, -26),
        (1000, 99_750, 100), // 99.75
        (2, 250_000, 1),     // 0.5 → 1
        (-2, 250_000, -1),
        (0, DE, 0),
        (1000, 0, 0),
        (i64::MAX, 1_000_000, i64::MAX),
        (i64::MIN, 2_000_000, i64::MIN),
    ] {
        assert_eq!(tax_exclusive(net, ppm), tax, "{net} at {ppm}");
    }
}

#[test]
fn inclusive_tax_is_what_is_left_after_the_rounded_net_and_adds_back_exactly() {
    for (gross, ppm, tax) in [
        (1200, DE, 192), // net 1008.40 → 1008
        (-1200, DE, -192),
        (1190, DE, 190),
        (119, DE, 19),
        (1000, 200_000, 167), // net 833.33 → 833
        (1255, 255_000, 255),
        (1, DE, 0), // net 0.84 → 1
        (0, DE, 0),
        (500, 0, 0),
    ] {
        assert_eq!(tax_inclusive(gross, ppm), tax, "{gross} at {ppm}");
    }
    // Half away from zero on the net: 5 at 100 % is a net of 2.5 → 3, so the tax is 2;
    // −5 → net −3, tax −2.
    assert_eq!(tax_inclusive(5, 1_000_000), 2);
    assert_eq!(tax_inclusive(-5, 1_000_000), -2);
    for gross in [-10_007, -1, 0, 1, 99, 1200, 12_345_678] {
        for ppm in [0, 50_000, 81_000, 99_750, 190_000, 255_000] {
            let t = tax_inclusive(gross, ppm);
            let net = gross - t;
            assert_eq!(net + t, gross);
            assert_eq!(
                tax_inclusive(-gross, ppm),
                -t,
                "symmetric: {gross} at {ppm}"
            );
            // The net carries the tax back to the gross within half a unit.
            let back = net + tax_exclusive(net, ppm);
            assert!((back - gross).abs() <= 1, "{gross} at {ppm}: net {net}");
        }
    }
}

#[test]
fn the_behaviour_picks_added_or_inside() {
    assert_eq!(tax(1000, DE, TaxBehavior::Exclusive), 190);
    assert_eq!(tax(1200, DE, TaxBehavior::Inclusive), 192);
}

#[test]
fn a_spread_is_proportional_and_adds_up_exactly() {
    for (total, weights, shares) in [
        (19, vec![1, 1, 1], vec![7, 6, 6]), // 6.33 each: the first line takes the unit
        (10, vec![1, 2, 3, 4], vec![1, 2, 3, 4]),
        (100, vec![1, 1, 1], vec![34, 33, 33]),
        (2, vec![1, 1, 1], vec![1, 1, 0]),
        (5, vec![1, 3], vec![1, 4]), // 1.25, 3.75: the larger remainder is the second's
        (-19, vec![1, 1, 1], vec![-7, -6, -6]),
        (19, vec![-1, -1, -1], vec![7, 6, 6]),
        (-19, vec![-1, -1, -1], vec![-7, -6, -6]),
        (10, vec![3, -1], vec![15, -5]), // a discount line gets a negative share
        (7, vec![0, 0], vec![4, 3]),     // no proportion: even
        (7, vec![5, 0], vec![7, 0]),
        (0, vec![3, 4], vec![0, 0]),
        (190, vec![1000], vec![190]),
        (0, vec![], vec![]),
    ] {
        let got = spread(total, &weights);
        assert_eq!(got, shares, "{total} over {weights:?}");
        if !weights.is_empty() {
            assert_eq!(got.iter().sum::<i64>(), total);
        }
    }
}

#[test]
fn many_small_lines_are_taxed_on_their_total_not_line_by_line() {
    let lines = vec![1_i64; 100];
    // Per line: 0.19 rounds to 0 a hundred times: nothing, although 19 is owed.
    assert_eq!(lines.iter().map(|&l| tax_exclusive(l, DE)).sum::<i64>(), 0);
    let taxes = group_tax(&lines, DE, TaxBehavior::Exclusive);
    assert_eq!(taxes.len(), 100);
    assert_eq!(taxes.iter().sum::<i64>(), 19);
    assert!(taxes[..19].iter().all(|&t| t == 1), "19 × 1 first");
    assert!(taxes[19..].iter().all(|&t| t == 0), "then 81 × 0");
    // Inclusive: 100 × 0.01 gross hold 0.16 of tax (net 84.03 → 84).
    let taxes = group_tax(&lines, DE, TaxBehavior::Inclusive);
    assert_eq!(taxes.iter().sum::<i64>(), 16);
    // A credit of the same lines mirrors the charge.
    let credit = group_tax(&[-1; 100], DE, TaxBehavior::Exclusive);
    assert_eq!(credit.iter().sum::<i64>(), -19);
    assert!(credit[..19].iter().all(|&t| t == -1));
}
