use super::*;

/// Each address's claims made, with the bytes the model gave each.
type Claims = Vec<Vec<(Option<Arc<BodyClaim>>, usize)>>;

fn v4(n: u8) -> Option<IpAddr> {
    Some(IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, n)))
}

#[test]
fn budget_takes_what_fits_and_counts_what_is_forced() {
    let b = MemoryBudget::new(100);
    assert!(b.try_take(60));
    assert!(!b.try_take(41));
    assert!(b.try_take(40));
    assert!(b.spent());
    b.force_take(10);
    assert_eq!(b.used(), 110);
    b.give(110);
    assert_eq!(b.used(), 0);
    assert!(!b.spent());
    let unlimited = MemoryBudget::new(0);
    assert!(unlimited.try_take(usize::MAX / 2));
    assert!(!unlimited.spent());
}

#[test]
fn one_address_holds_at_most_its_share() {
    let (a, b) = (v4(1), v4(2));
    let budget = MemoryBudget::with_address_share(1000, 250);
    assert_eq!(MemoryBudget::address_share(1000, 100), 250);
    assert_eq!(MemoryBudget::address_share(1000, 400), 400);
    assert_eq!(MemoryBudget::address_share(300, 400), 300);
    let (mut a1, mut a2, mut b1, mut p1) = (None, None, None, None);
    assert!(budget.try_take_body(a, &mut a1, 200));
    assert!(!budget.try_take_body(a, &mut a2, 51));
    assert!(a2.is_none(), "a refusal makes no claim");
    assert!(budget.try_take_body(a, &mut a2, 50));
    assert!(budget.spent_for(a));
    assert!(!budget.spent_for(b));
    assert!(!budget.spent_for(None));
    // Another address and a trusted proxy (no key) are not held back.
    assert!(budget.try_take_body(b, &mut b1, 250));
    assert!(budget.try_take_body(None, &mut p1, 500));
    assert!(p1.is_none(), "a proxy's body has no claim");
    assert_eq!(budget.used(), 1000);
    assert!(budget.spent_for(b) && budget.spent_for(None));
    budget.give_body(a, &mut a1, 200);
    budget.give_body(a, &mut a2, 50);
    budget.give_body(b, &mut b1, 250);
    budget.give_body(None, &mut p1, 500);
    assert_eq!(budget.used(), 0);
    assert!(!budget.spent_for(a));
    budget.force_take_for(a, 300);
    assert!(budget.spent_for(a) && !budget.spent() && !budget.spent_for(b));
    budget.give_for(a, 300);
    assert!(budget.held().is_empty());
    // No share: only the whole budget counts.
    let plain = MemoryBudget::new(1000);
    let mut c = None;
    assert!(plain.try_take_body(a, &mut c, 1000));
    assert!(plain.held().is_empty() && c.is_none());
    assert_eq!(
        budget.revocations(),
        0,
        "no fair shares, nothing taken back"
    );
}

/// A body taken back: its claim says so, its bytes are back in the budget
/// at once, its connection gives nothing back twice, and the loops are
/// woken once per new holder that took some.
#[test]
fn a_newcomer_takes_back_what_is_over_the_others_shares_at_once() {
    // 1000 bytes, bodies up to 100, a quarter (250) per address.
    let budget = MemoryBudget::fair(1000, 250, 100);
    let woken = Arc::new(AtomicUsize::new(0));
    let w = Arc::clone(&woken);
    budget.set_on_revoke(move || {
        w.fetch_add(1, Ordering::SeqCst);
    });
    let mut claims: Vec<(Option<IpAddr>, Option<Arc<BodyClaim>>)> = Vec::new();
    let mut take = |who: u8, n: usize| {
        let mut c = None;
        let ok = budget.try_take_body(v4(who), &mut c, n);
        if ok {
            claims.push((v4(who), c));
        }
        ok
    };
    // Alone and second and third: a quarter each (250: 1000/3 is more).
    for who in 1..=3 {
        assert!((0..5).filter(|_| take(who, 50)).count() == 5);
        assert!(!take(who, 50), "past its quarter");
    }
    assert_eq!(budget.used(), 750);
    // A fourth: a share is now 1000/5 = 200; each of the three gives its
    // newest body back at once, and the fourth takes its body.
    assert!(take(4, 100));
    assert_eq!(budget.used(), 3 * 200 + 100);
    assert_eq!((budget.revocations(), woken.load(Ordering::SeqCst)), (3, 1));
    let revoked: Vec<usize> = claims
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| c.as_ref().unwrap().revoked())
        .map(|(i, _)| i)
        .collect();
    // The newest of each address's five.
    assert_eq!(revoked, vec![4, 9, 14]);
    // Giving a revoked body back gives nothing; the others give theirs.
    for (key, mut c) in claims {
        budget.give_body(key, &mut c, 50);
    }
    assert_eq!(budget.used(), 0);
    assert!(budget.held().is_empty());
}

proptest::proptest! {
    /// Up to 60 addresses take bodies (fresh or growing) and give them
    /// back, in any order, with any sizes up to the largest body, and no
    /// sweep ever runs: the budget counts exactly the bytes of the bodies
    /// not taken back, never more than its limit; whenever an address
    /// that holds nothing takes a body, every other address is within its
    /// share of the `k + 1` holders at once (the oracle: `limit / (k + 2)`,
    /// at least a body, at most a quarter), and the body is granted
    /// whenever those shares leave room for it (`(k + 2)` bodies fit). (The
    /// old sweep-only shares let 15 addresses arriving within a second
    /// spend the budget for the next one.)
    #[test]
    fn a_newcomer_always_finds_its_share(
        addresses in 1u8..=60,
        ops in proptest::collection::vec((0u8..60, 1usize..=1024, 0u8..8), 0..800),
    ) {
        const BODY: usize = 1024;
        const LIMIT: usize = 64 * BODY;
        let quarter = MemoryBudget::address_share(LIMIT, BODY);
        let budget = MemoryBudget::fair(LIMIT, quarter, BODY);
        // Every claim made, by address; the model's bytes of each.
        let mut held: Claims = vec![Vec::new(); 64];
        let live = |held: &Claims, who: usize| -> usize {
            held[who]
                .iter()
                .filter(|(c, _)| !c.as_ref().unwrap().revoked())
                .map(|(_, n)| n)
                .sum()
        };
        for (who, n, op) in ops {
            let who = usize::from(who % addresses);
            let key = v4(who as u8);
            match op {
                0 | 1 => {
                    if let Some((mut c, n)) = held[who].pop() {
                        budget.give_body(key, &mut c, n);
                    }
                }
                2 => {
                    // A body that grows (chunked): more for the newest claim.
                    if let Some((c, have)) = held[who].last_mut().filter(|(_, have)| *have < BODY) {
                        let n = n.min(BODY - *have);
                        let revoked = c.as_ref().unwrap().revoked();
                        let before = budget.used();
                        if budget.try_take_body(key, c, n) {
                            proptest::prop_assert!(!revoked);
                            *have += n;
                        } else {
                            proptest::prop_assert_eq!(budget.used(), before);
                        }
                    }
                }
                _ => {
                    let holders = (0..64).filter(|&a| live(&held, a) > 0).count();
                    let newcomer = live(&held, who) == 0;
                    let mut c = None;
                    let ok = budget.try_take_body(key, &mut c, n);
                    if ok {
                        held[who].push((c, n));
                    } else {
                        proptest::prop_assert!(c.is_none());
                    }
                    if newcomer {
                        let k = holders + 1;
                        let share = (LIMIT / (k + 1)).max(BODY).min(quarter);
                        for a in (0..64).filter(|&a| a != who) {
                            proptest::prop_assert!(live(&held, a) <= share, "{a} holds {} > {share}", live(&held, a));
                        }
                        if (k + 1) * BODY <= LIMIT {
                            proptest::prop_assert!(ok, "a newcomer refused {n} with {holders} holding, used {}", budget.used());
                        }
                    }
                }
            }
            let counted: usize = (0..64).map(|a| live(&held, a)).sum();
            proptest::prop_assert_eq!(budget.used(), counted);
            proptest::prop_assert!(budget.used() <= LIMIT);
        }
        for (a, claims) in held.iter_mut().enumerate() {
            for (mut c, n) in claims.drain(..) {
                budget.give_body(v4(a as u8), &mut c, n);
            }
        }
        proptest::prop_assert_eq!(budget.used(), 0);
        proptest::prop_assert!(budget.held().is_empty());
    }
}
