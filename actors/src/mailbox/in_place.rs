//! [`run_in_place`]: a producer handles a consumer's items on its own task while the
//! consumer is idle, instead of waking it (decision 0086).
//!
//! At thousands of sessions a tick's cost is its task hops: each wakes a task whose state
//! is cold by then. When the consumer has nothing to do (no item waits, none is handled,
//! no wake is on its way), the producer claims its inbox ([`Inbox::claim_all`]) and does
//! the consumer's work itself, item by item, in push order, each marked in flight and done
//! as the consumer marks them, the fault hook run for each. The consumer takes nothing
//! while the claim holds and is rung afterwards if it looked meanwhile; a successor started
//! meanwhile recovers nothing of the producer's. A panic while handling an item ends the
//! claim with the item in flight and fails the consumer's current instance with the
//! panic's text: its supervisor restarts it, and the successor reports the item exactly as
//! if the instance had failed on it.
//!
//! Only for a consumer whose work needs no state of its instance's (the fast lane: its
//! callbacks and queues) and never waits.
//!
//! [`Inbox::claim_all`]: crate::inbox::Inbox::claim_all

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::mailbox::Mailbox;
use crate::mailbox::task::panic_text;

/// Handles `items` with `handle` on the caller's task, in order, if `mailbox`'s consumer is
/// idle (then `items` is emptied); otherwise leaves them for an ordinary push. Returns
/// whether it ran them. See the module documentation.
pub fn run_in_place<I, L, M>(
    mailbox: &Mailbox<I, L, M>,
    items: &mut Vec<I>,
    mut handle: impl FnMut(I),
) -> bool
where
    M: Send + 'static,
{
    // The router flushes after every wake, most with nothing for this lane: no lock then.
    if items.is_empty() {
        return false;
    }
    let inbox = &mailbox.inbox;
    if !inbox.claim_all(items) {
        return false;
    }
    let drained = catch_unwind(AssertUnwindSafe(|| {
        while let Some(taken) = inbox.take_claimed() {
            handle(taken.item);
            inbox.done(taken.seq);
        }
    }));
    if let Err(panic) = drained {
        inbox.release_failed();
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
    use crate::inbox::tests::{drain, inbox};
    use crate::inbox::{Bound, Failed, Inbox};
    use crate::mailbox::{Instance, InstanceSlot, NoMsg};

    /// An inbox of numbers labelled by their value, whose doorbell counts its rings, with
    /// its consumer idle (its first take found it empty, which disarms the doorbell).
    fn idle_inbox() -> (Arc<Inbox<u32, u32>>, Arc<AtomicU32>) {
        let (inbox, rings) = inbox(Bound::wait(10));
        assert!(inbox.take().is_none());
        (Arc::new(inbox), rings)
    }

    /// Takes (as the producer that claimed) and finishes everything waiting.
    fn consume_claimed(inbox: &Inbox<u32, u32>) -> Vec<u32> {
        std::iter::from_fn(|| inbox.take_claimed())
            .map(|taken| {
                inbox.done(taken.seq);
                taken.item
            })
            .collect()
    }

    #[test]
    fn a_claim_is_granted_only_while_the_consumer_is_idle() {
        let (inbox, rings) = inbox(Bound::wait(10));
        // A new inbox is armed: its first consumer's wake is on its way.
        let mut items = vec![1];
        assert!(!inbox.claim_all(&mut items));
        assert_eq!(items, [1], "a refused claim leaves the items to push");
        inbox.push_all(items.drain(..)).unwrap();
        // The consumer handles item 1: still armed, no claim.
        let taken = inbox.take().unwrap();
        let mut items = vec![2];
        assert!(!inbox.claim_all(&mut items));
        inbox.done(taken.seq);
        // Its take finds the inbox empty: idle, and the claim is granted.
        assert!(inbox.take().is_none());
        assert!(inbox.claim_all(&mut items));
        assert!(items.is_empty());
        // No second claim while the first holds; an empty claim is never granted.
        assert!(!inbox.claim_all(&mut vec![3]));
        assert_eq!(consume_claimed(&inbox), [2]);
        assert!(!inbox.claim_all(&mut Vec::new()));
        // A closed inbox grants none.
        inbox.close();
        assert!(!inbox.claim_all(&mut vec![4]));
        assert_eq!(rings.load(Ordering::SeqCst), 0, "nothing rang the consumer");
        let stats = inbox.stats();
        assert_eq!((stats.in_place, stats.finished), (1, 2));
    }

    #[test]
    fn while_a_claim_holds_the_consumer_takes_nothing_and_is_rung_after() {
        let (inbox, rings) = idle_inbox();
        assert!(inbox.claim_all(&mut vec![1, 2]));
        // Another producer's push goes behind, ringing nobody: the claimant takes it too.
        inbox.push(3).unwrap();
        // The consumer looks (a stray wake): nothing for it, and it is owed a ring.
        assert_eq!(drain(&inbox), Vec::<u32>::new());
        assert_eq!(consume_claimed(&inbox), [1, 2, 3]);
        assert_eq!(rings.load(Ordering::SeqCst), 1, "rung once the claim ended");
        assert_eq!(drain(&inbox), Vec::<u32>::new());
        // Idle again: the next push rings as usual.
        inbox.push(4).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 2);
        assert_eq!(drain(&inbox), [4]);
        assert_eq!(inbox.finished(), 4);
    }

    #[test]
    fn a_claim_that_ends_without_the_consumer_looking_leaves_it_idle_and_unrung() {
        let (inbox, rings) = idle_inbox();
        assert!(inbox.claim_all(&mut vec![1]));
        assert_eq!(consume_claimed(&inbox), [1]);
        assert_eq!(rings.load(Ordering::SeqCst), 0);
        // Disarmed: a claim is granted again, and a push rings.
        assert!(inbox.claim_all(&mut vec![2]));
        assert_eq!(consume_claimed(&inbox), [2]);
        inbox.push(3).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_successor_started_during_a_claim_recovers_nothing_of_the_claimants() {
        let (inbox, rings) = idle_inbox();
        assert!(inbox.claim_all(&mut vec![1, 2]));
        let first = inbox.take_claimed().unwrap();
        // The consumer's instance is replaced while the claimant handles item 1: item 1 is
        // in flight, but the claimant's, not a failed instance's.
        assert_eq!(inbox.recover(), None);
        inbox.done(first.seq);
        assert_eq!(consume_claimed(&inbox), [2]);
        assert_eq!(rings.load(Ordering::SeqCst), 1, "the successor is rung");
        assert_eq!(drain(&inbox), Vec::<u32>::new());
        assert_eq!(inbox.stats().failed, 0);
    }

    #[test]
    fn a_failed_claim_leaves_its_item_to_the_successor_and_the_rest_after_it() {
        let (inbox, rings) = idle_inbox();
        assert!(inbox.claim_all(&mut vec![1, 2, 3]));
        let first = inbox.take_claimed().unwrap();
        inbox.done(first.seq);
        let _failed_on = inbox.take_claimed().unwrap();
        inbox.release_failed();
        // Armed still: a push rings nobody (the failing instance must not drain).
        inbox.push(4).unwrap();
        assert_eq!(rings.load(Ordering::SeqCst), 0);
        // The successor learns of item 2 and takes everything after it, in order.
        assert_eq!(inbox.recover(), Some(Failed { seq: 2, label: 2 }));
        assert_eq!(drain(&inbox), [3, 4]);
        assert_eq!(inbox.stats().failed, 1);
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
