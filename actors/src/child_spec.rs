//! [`ChildStart`]: how the supervisor starts one child of the session, and starts it again —
//! one per child, built where the session is spawned, so the supervisor holds one table of
//! them and knows no child's actor type or arguments.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use ractor::{Actor, ActorCell, ActorProcessingErr};

use crate::slot::Slot;

/// Starts an instance of a child, linked to the supervisor it is given, and points the
/// child's slot at it; returns its cell. Called once per instance: at the start of the
/// session, and for each restart.
pub type ChildStart =
    Box<dyn FnMut(ActorCell) -> BoxFuture<'static, Result<ActorCell, ActorProcessingErr>> + Send>;

/// A restartable child: every instance starts from a clone of the same arguments (what
/// must outlive an instance is shared behind them, or waits in the child's inbox).
pub fn restartable<A>(actor: A, args: A::Arguments, slot: Arc<Slot<A::Msg>>) -> ChildStart
where
    A: Actor + Clone,
    A::Arguments: Clone + Sync,
{
    Box::new(move |supervisor| {
        let (actor, args, slot) = (actor.clone(), args.clone(), Arc::clone(&slot));
        Box::pin(async move {
            let (instance, _) = Actor::spawn_linked(None, actor, args, supervisor).await?;
            slot.set(instance.clone());
            Ok(instance.get_cell())
        })
    })
}

/// A child started once: its failure ends the session, so a second start is an error that
/// names it.
pub fn once<A>(
    name: &'static str,
    actor: A,
    args: A::Arguments,
    slot: Arc<Slot<A::Msg>>,
) -> ChildStart
where
    A: Actor,
{
    let mut first = Some((actor, args));
    Box::new(move |supervisor| {
        let first = first.take();
        let slot = Arc::clone(&slot);
        Box::pin(async move {
            let (actor, args) = first.ok_or_else(|| started_twice(name))?;
            let (instance, _) = Actor::spawn_linked(None, actor, args, supervisor).await?;
            slot.set(instance.clone());
            Ok(instance.get_cell())
        })
    })
}

/// A child started once by `start` (the transport, through its factory).
pub fn once_with<F>(name: &'static str, start: F) -> ChildStart
where
    F: FnOnce(ActorCell) -> BoxFuture<'static, Result<ActorCell, ActorProcessingErr>>
        + Send
        + 'static,
{
    let mut start = Some(start);
    Box::new(move |supervisor| match start.take() {
        Some(start) => start(supervisor),
        None => Box::pin(async move { Err(started_twice(name)) }),
    })
}

fn started_twice(name: &'static str) -> ActorProcessingErr {
    format!("the {name} is started once: it is not restarted").into()
}
