//! [`run_in_place`]: a producer handles a consumer's items on its own task while the
//! consumer is idle, instead of waking it (decision 0086).
//!
//! At thousands of sessions a tick's cost is its task hops: each wakes a task whose state
//! is cold by then. When the consumer has nothing to do (no item waits, none is handled,
//! no wake is on its way), the producer claims its inbox for its items ([`Inbox::claim`])
//! and does the consumer's work itself, item by item, in push order, each numbered, marked
//! in flight and done as the consumer marks them, the fault hook run for each; the items
//! never pass through the queue (decision 0096). The consumer takes nothing while the
//! claim holds and is rung afterwards if it looked meanwhile; a successor started
//! meanwhile recovers nothing of the producer's. A panic while handling an item ends the
//! claim with the item in flight and fails the consumer's current instance with the
//! panic's text: its supervisor restarts it, and the successor reports the item exactly as
//! if the instance had failed on it, then takes the producer's items after it.
//!
//! Only for a consumer whose work needs no state of its instance's (the fast lane: its
//! callbacks and queues) and never waits.
//!
//! [`Inbox::claim`]: crate::inbox::Inbox::claim

use crate::mailbox::Mailbox;
use crate::mailbox::task::panic_text;

/// Handles `items` with `handle` on the caller's task, in order, if `mailbox`'s consumer is
/// idle (then `items` is emptied); otherwise leaves them for an ordinary push. Returns
/// whether it ran them. See the module documentation.
pub fn run_in_place<I, L, M>(
    mailbox: &Mailbox<I, L, M>,
    items: &mut Vec<I>,
    handle: impl FnMut(I),
) -> bool
where
    M: Send + 'static,
{
    // The router flushes after every wake, most with nothing for this lane: no lock then.
    if items.is_empty() {
        return false;
    }
    let inbox = &mailbox.inbox;
    let Some(claim) = inbox.claim(items.len()) else {
        return false;
    };
    if let Err(panic) = inbox.handle_claim(claim, items.drain(..), handle) {
        // The text the runner gives a panic on the instance's own task. None in place (it
        // ended, and is being restarted): its successor recovers the item.
        mailbox.actor.fail(panic_text(panic));
    }
    true
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::child::Child;
    use crate::fault::FaultHook;
    use crate::inbox::tests::{drain, inbox};
    use crate::inbox::{Bound, Closed, Failed, Inbox};
    use crate::mailbox::{Instance, InstanceSlot, NoMsg};

    /// An inbox of numbers labelled by their value, whose doorbell counts its rings, with
    /// its consumer idle (its first take found it empty, which disarms the doorbell).
    fn idle_inbox() -> (Arc<Inbox<u32, u32>>, Arc<AtomicU32>) {
        let (inbox, rings) = inbox(Bound::wait(10));
        assert!(inbox.take().is_none());
        (Arc::new(inbox), rings)
    }

    /// Claims `inbox` for `items` and handles them (and what is pushed meanwhile) with
    /// `handle`, which also sees each item's number as the fault hook does; what it handled.
    fn claim_and_handle(
        inbox: &Inbox<u32, u32>,
        items: Vec<u32>,
        mut handle: impl FnMut(u32),
    ) -> Vec<u32> {
        let claim = inbox.claim(items.len()).expect("the consumer is idle");
        let mut seen = Vec::new();
        let handled = inbox.handle_claim(claim, items.into_iter(), |n| {
            seen.push(n);
            handle(n);
        });
        assert!(handled.is_ok());
        seen
    }

    /// Records the numbers the fault hook is asked about, and fails on one of them.
    #[derive(Default)]
    struct Numbers(std::sync::Mutex<Vec<u64>>, Option<u64>);

    impl FaultHook for Numbers {
        fn before(&self, _child: Child, input: u64) {
            self.0.lock().unwrap().push(input);
            if Some(input) == self.1 {
                panic!("injected fault on item {input}");
            }
        }
    }

    #[test]
    fn a_claim_is_granted_only_while_the_consumer_is_idle() {
        let (inbox, rings) = inbox(Bound::wait(10));
        // A new inbox is armed: its first consumer's wake is on its way.
        assert!(inbox.claim(1).is_none());
        inbox.push(1).unwrap();
        // The consumer handles item 1: still armed, no claim.
        let taken = inbox.take().unwrap();
        assert!(inbox.claim(1).is_none());
        inbox.done(taken.seq);
        // Its take finds the inbox empty: idle, and the claim is granted, numbered next.
        assert!(inbox.take().is_none());
        let claim = inbox.claim(1).unwrap();
        // No second claim while the first holds; a claim for nothing is never granted.
        assert!(inbox.claim(1).is_none());
        let mut seen = Vec::new();
        assert!(
            inbox
                .handle_claim(claim, [2].into_iter(), |n| seen.push(n))
                .is_ok()
        );
        assert_eq!(seen, [2]);
        assert!(inbox.claim(0).is_none());
        // A closed inbox grants none.
        inbox.close();
        assert!(inbox.claim(1).is_none());
        assert_eq!(rings.load(Ordering::SeqCst), 0, "nothing rang the consumer");
        let stats = inbox.stats();
        assert_eq!(
            (
                stats.in_place,
                stats.pushed,
                stats.finished,
                stats.high_water
            ),
            (1, 2, 2, 1),
            "the claimed item is numbered and finished, and never waited"
        );
    }

    #[test]
    fn claimed_items_get_the_numbers_and_fault_hook_a_push_would_give_them() {
        let (inbox, _rings) = idle_inbox();
        let hook = Arc::new(Numbers::default());
        inbox.set_fault_hook(Child::FastLane, hook.clone());
        inbox.push(1).unwrap();
        assert_eq!(drain(&inbox), [1]);
        // Two claimed, one pushed behind them while the first is handled.
        let pusher = Arc::clone(&inbox);
        let seen = claim_and_handle(&inbox, vec![2, 3], move |n| {
            if n == 2 {
                assert_eq!(pusher.push(4), Ok(4), "numbered after the claimed items");
            }
        });
        assert_eq!(seen, [2, 3, 4]);
        assert_eq!(*hook.0.lock().unwrap(), [1, 2, 3, 4]);
        assert_eq!(inbox.finished(), 4);
    }

    #[test]
    fn while_a_claim_holds_the_consumer_takes_nothing_and_is_rung_after() {
        let (inbox, rings) = idle_inbox();
        let other = Arc::clone(&inbox);
        let seen = claim_and_handle(&inbox, vec![1, 2], move |n| {
            if n == 1 {
                // Another producer's push goes behind, ringing nobody: the claimant takes
                // it too. The consumer looks (a stray wake): nothing for it, and it is
                // owed a ring.
                other.push(3).unwrap();
                assert_eq!(drain(&other), Vec::<u32>::new());
            }
        });
        assert_eq!(seen, [1, 2, 3]);
        assert_eq!(rings.load(Ordering::SeqCst), 1, "rung once the claim ended");
        assert_eq!(drain(&inbox), Vec::<u32>::new());
        // Idle again: the next push rings as usual.
        inbox.push(4).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 2);
        assert_eq!(drain(&inbox), [4]);
        assert_eq!(inbox.finished(), 4);
    }

    #[test]
    fn a_reserved_number_is_the_next_and_given_only_while_the_consumer_is_idle() {
        let (inbox, rings) = inbox(Bound::wait(10));
        // A new inbox is armed (its first consumer's wake is on its way): none.
        assert_eq!(inbox.reserve(), None);
        assert!(inbox.take().is_none());
        assert_eq!(inbox.reserve(), Some(1));
        inbox.done(1);
        inbox.push(2).unwrap();
        assert_eq!(
            inbox.reserve(),
            None,
            "an item waits: the caller pushes behind it"
        );
        assert_eq!(drain(&inbox), [2]);
        assert_eq!(inbox.reserve(), Some(3));
        // Pushed while the caller handles item 3: numbered after it, and rung as ever.
        inbox.push(4).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 2);
        inbox.done(3);
        assert_eq!(drain(&inbox), [4]);
        // Not while a producer holds a claim, nor once closed.
        let claim = inbox.claim(1).unwrap();
        assert_eq!(inbox.reserve(), None);
        assert!(inbox.handle_claim(claim, [5].into_iter(), |_| {}).is_ok());
        let stats = inbox.stats();
        assert_eq!((stats.pushed, stats.finished, stats.in_place), (5, 5, 3));
        inbox.close();
        assert_eq!(inbox.reserve(), None);
    }

    #[test]
    fn after_a_failure_on_a_reserved_item_nothing_more_is_handled_in_place() {
        let (inbox, rings) = idle_inbox();
        assert_eq!(inbox.reserve(), Some(1));
        inbox.hold_failed();
        // Item 1 is in flight; pushes ring nobody and nothing is granted in place.
        inbox.push(2).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 0);
        assert_eq!(inbox.reserve(), None);
        assert!(inbox.claim(1).is_none());
        // A successor marks item 1 failed (a reserved item has no label to report: the
        // router, whose failure ends the session) and takes what followed.
        assert_eq!(inbox.recover(), None);
        let stats = inbox.stats();
        assert_eq!((stats.failed, stats.finished), (1, 1));
        assert_eq!(drain(&inbox), [2]);
    }

    #[test]
    fn a_claim_that_ends_without_the_consumer_looking_leaves_it_idle_and_unrung() {
        let (inbox, rings) = idle_inbox();
        assert_eq!(claim_and_handle(&inbox, vec![1], |_| {}), [1]);
        assert_eq!(rings.load(Ordering::SeqCst), 0);
        // Disarmed: a claim is granted again, and a push rings.
        assert_eq!(claim_and_handle(&inbox, vec![2], |_| {}), [2]);
        inbox.push(3).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_successor_started_during_a_claim_recovers_nothing_of_the_claimants() {
        let (inbox, rings) = idle_inbox();
        let consumer = Arc::clone(&inbox);
        let seen = claim_and_handle(&inbox, vec![1, 2], move |n| {
            if n == 1 {
                // The consumer's instance is replaced while the claimant handles item 1:
                // item 1 is in flight, but the claimant's, not a failed instance's.
                assert_eq!(consumer.recover(), None);
            }
        });
        assert_eq!(seen, [1, 2]);
        assert_eq!(rings.load(Ordering::SeqCst), 1, "the successor is rung");
        assert_eq!(drain(&inbox), Vec::<u32>::new());
        assert_eq!(inbox.stats().failed, 0);
    }

    #[test]
    fn a_claimant_failing_on_its_own_item_leaves_it_to_the_successor_and_the_rest_after_it() {
        let (inbox, rings) = idle_inbox();
        let claim = inbox.claim(4).unwrap();
        let mut seen = Vec::new();
        let failed = inbox.handle_claim(claim, [1, 2, 3, 4].into_iter(), |n| {
            if n == 1 {
                inbox.push(5).unwrap();
            }
            assert_ne!(n, 2, "the callback failed on {n}");
            seen.push(n);
        });
        assert!(failed.is_err());
        assert_eq!(seen, [1]);
        // Armed still: a push rings nobody (the failing instance must not drain).
        inbox.push(6).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 0);
        // The successor learns of item 2 and takes everything after it, in order, each
        // under the number it was claimed or pushed with.
        assert_eq!(inbox.recover(), Some(Failed { seq: 2, label: 2 }));
        let mut taken = Vec::new();
        while let Some(item) = inbox.take() {
            taken.push((item.seq, item.item));
            inbox.done(item.seq);
        }
        assert_eq!(taken, [(3, 3), (4, 4), (5, 5), (6, 6)]);
        let stats = inbox.stats();
        assert_eq!((stats.failed, stats.finished, stats.pushed), (1, 6, 6));
    }

    #[test]
    fn a_claimant_failing_on_an_item_pushed_behind_its_own_leaves_that_one_in_flight() {
        let (inbox, rings) = idle_inbox();
        let hook = Arc::new(Numbers(std::sync::Mutex::default(), Some(3)));
        inbox.set_fault_hook(Child::FastLane, hook);
        let claim = inbox.claim(2).unwrap();
        let mut seen = Vec::new();
        let failed = inbox.handle_claim(claim, [1, 2].into_iter(), |n| {
            if n == 1 {
                inbox.push(3).unwrap();
                inbox.push(4).unwrap();
            }
            seen.push(n);
        });
        assert!(failed.is_err(), "the fault hook failed it on item 3");
        assert_eq!(seen, [1, 2]);
        assert_eq!(rings.load(Ordering::SeqCst), 0);
        assert_eq!(inbox.recover(), Some(Failed { seq: 3, label: 3 }));
        assert_eq!(drain(&inbox), [4]);
    }

    #[test]
    fn an_inbox_closed_during_a_claim_counts_a_failed_claimants_items_finished() {
        let (inbox, _rings) = idle_inbox();
        let claim = inbox.claim(3).unwrap();
        let failed = inbox.handle_claim(claim, [1, 2, 3].into_iter(), |n| {
            if n == 1 {
                // The consumer stops for good: nothing waited, nothing handed back.
                assert_eq!(inbox.close(), Vec::<u32>::new());
            }
            assert_ne!(n, 2, "the callback failed on {n}");
        });
        assert!(failed.is_err());
        // No successor will come: the failed item and the one after it count finished.
        assert_eq!(inbox.finished(), 3);
        assert_eq!(inbox.len(), 0);
        assert_eq!(inbox.push(4), Err(Closed(4)));
    }

    #[test]
    fn a_claimants_finish_after_a_close_does_not_take_the_count_back() {
        let (inbox, _rings) = idle_inbox();
        let seen = claim_and_handle(&inbox, vec![1, 2], |n| {
            if n == 1 {
                inbox.push(3).unwrap();
                // Item 3 waited: handed back to the closer, counted finished with all
                // before it.
                assert_eq!(inbox.close(), [3]);
                assert_eq!(inbox.finished(), 3);
            }
        });
        assert_eq!(seen, [1, 2]);
        assert_eq!(inbox.finished(), 3);
    }

    /// A slot holding one instance, which the test plays: the consumer of `inbox`.
    fn slot_with_instance() -> (Arc<InstanceSlot<NoMsg>>, Instance<NoMsg>) {
        let slot: Arc<InstanceSlot<NoMsg>> = Arc::default();
        let instance = Instance::new();
        slot.set(instance.clone());
        (slot, instance)
    }

    #[test]
    fn run_in_place_handles_in_order_when_idle_and_leaves_the_items_otherwise() {
        let (inbox, rings) = idle_inbox();
        let (slot, instance) = slot_with_instance();
        let mailbox = Mailbox::from_parts(Arc::clone(&inbox), slot);
        let mut seen = Vec::new();
        let mut items = vec![1, 2, 3];
        assert!(run_in_place(&mailbox, &mut items, |n| seen.push(n)));
        assert_eq!((seen.as_slice(), items.len()), (&[1, 2, 3][..], 0));
        // The consumer is busy (a wake on its way): the items stay for an ordinary push.
        inbox.push(4).unwrap();
        let mut items = vec![5];
        assert!(!run_in_place(&mailbox, &mut items, |n| seen.push(n)));
        assert_eq!(items, [5]);
        assert_eq!(drain(&inbox), [4]);
        assert_eq!(rings.load(Ordering::SeqCst), 1);
        assert_eq!(instance.take_failure(), None);
        // Nothing to hand over: no claim, and the idle consumer is left as it was.
        assert!(!run_in_place(&mailbox, &mut Vec::new(), |n| seen.push(n)));
        assert_eq!(inbox.stats().in_place, 1);
    }

    #[test]
    fn a_panic_in_place_fails_the_consumers_instance_and_its_successor_reports_the_item() {
        let (inbox, rings) = idle_inbox();
        let (slot, instance) = slot_with_instance();
        let mailbox = Mailbox::from_parts(Arc::clone(&inbox), Arc::clone(&slot));
        let mut seen = Vec::new();
        let ran = run_in_place(&mailbox, &mut vec![1, 2, 3], |n| {
            if n == 2 {
                panic!("the callback failed on {n}");
            }
            seen.push(n);
        });
        assert!(ran);
        assert_eq!(seen, [1]);
        // The instance is told to fail with the panic's text (its runner ends it with it).
        assert_eq!(
            instance.take_failure().as_deref(),
            Some("the callback failed on 2")
        );
        assert_eq!(instance.take_failure(), None, "told once");
        assert_eq!(rings.load(Ordering::SeqCst), 0);
        // Its successor recovers item 2 and drains item 3; the claimant got none of it.
        assert_eq!(inbox.recover(), Some(Failed { seq: 2, label: 2 }));
        assert_eq!(drain(&inbox), [3]);
        // With no instance in place the panic still leaves the item for the next one.
        slot.clear();
        assert!(run_in_place(&mailbox, &mut vec![4], |_| panic!("again")));
        assert_eq!(inbox.recover(), Some(Failed { seq: 4, label: 4 }));
    }
}
