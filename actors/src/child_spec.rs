//! [`ChildStart`]: how the supervisor starts one child of the session, and starts it again —
//! one per child, built where the session is spawned, so the supervisor holds one table of
//! them ([`Children`]) and knows no child's type or arguments.
//!
//! A start carries what the supervisor needs of its child besides starting it: which child
//! it is and its mailbox's [`Door`] (clear the slot, count what waits, install a fault
//! hook). For an inbox-driven child both come from its [`Consumer`] (`Consumer::CHILD`,
//! `Consumer::mailbox`), so its start is built from its arguments alone. An inbox-driven
//! child runs on a task of its own ([`spawn_consumer`]) and reports its end to the
//! supervisor by a message; the transport is a ractor actor linked to the supervisor
//! (decision 0079).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use ractor::{ActorCell, ActorProcessingErr, ActorRef};
use tokio::task::JoinHandle;

use crate::child::Child;
use crate::fault::FaultHook;
use crate::mailbox::{Consumer, Door, InstanceControl, SupervisorMsg, spawn_consumer};

/// Starts an instance of a child for the supervisor it is given (an inbox-driven instance
/// is in its mailbox's slot before it drains); returns what the supervisor holds of it.
/// Called once per instance: at the start of the session, and for each restart.
type StartFn = Box<
    dyn FnMut(&ActorRef<SupervisorMsg>) -> BoxFuture<'static, Result<Started, ActorProcessingErr>>
        + Send,
>;

/// How the supervisor starts one child, and what it reaches of it without its types.
pub struct ChildStart {
    child: Child,
    door: Arc<dyn Door>,
    start: StartFn,
}

impl ChildStart {
    /// Starts an instance for `supervisor` (see [`StartFn`]).
    pub fn start(
        &mut self,
        supervisor: &ActorRef<SupervisorMsg>,
    ) -> BoxFuture<'static, Result<Started, ActorProcessingErr>> {
        (self.start)(supervisor)
    }
}

/// A started instance, as the supervisor holds it.
pub enum Started {
    /// A ractor actor linked to the supervisor (the transport): its end comes as ractor's
    /// supervision event.
    Actor(ActorCell),
    /// A consumer on a task of its own: its end comes as [`SupervisorMsg::TaskEnded`].
    Task(TaskChild),
}

/// A child instance on a task of its own, as the supervisor holds it. Dropped, it aborts the
/// task (the supervisor failed, or let go of it): no task outlives its session's supervisor
/// but for the bounded time [`TaskChild::stop_within`] gives it to finish its stop.
pub struct TaskChild {
    instance: Arc<dyn InstanceControl>,
    task: JoinHandle<()>,
}

impl TaskChild {
    /// Its instance's id ([`crate::mailbox::Instance::id`]).
    pub fn id(&self) -> u64 {
        self.instance.id()
    }

    /// Aborts its task where it is (a kill: `stopped` does not run).
    pub fn kill(self) {
        self.task.abort();
    }

    /// Asks it to stop: it finishes what it handles and runs `stopped` (closing its inbox,
    /// flushing what it holds), then its task ends.
    pub fn stop(&self) {
        self.instance.stop();
    }

    /// Waits until its task ended, or until `deadline`, past which it is aborted (stuck
    /// where no stop reaches it: the router waiting for room in a lane that was killed,
    /// say).
    pub async fn ended_by(mut self, deadline: tokio::time::Instant) {
        let _ = tokio::time::timeout_at(deadline, &mut self.task).await;
        // Dropped here: aborts the task if it has not ended.
    }
}

impl Drop for TaskChild {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts consumer `C` on a task of its own, whose end is told to `supervisor`.
async fn start_task<C: Consumer>(
    args: C::Args,
    supervisor: ActorRef<SupervisorMsg>,
) -> Result<Started, ActorProcessingErr> {
    let (instance, task) = spawn_consumer::<C, _>(args, move |ended| {
        // A supervisor that is gone has aborted or let go of this task: nobody to tell.
        let _ = supervisor.cast(SupervisorMsg::TaskEnded {
            child: C::CHILD,
            instance: ended.instance,
            failure: ended.failure,
        });
    })
    .await?;
    Ok(Started::Task(TaskChild {
        instance: instance.control(),
        task,
    }))
}

/// A restartable inbox-driven child: every instance starts from a clone of the same
/// arguments (what must outlive an instance is shared behind them, or waits in the child's
/// inbox). Its name and mailbox are its consumer's.
pub fn restartable<C>(args: C::Args) -> ChildStart
where
    C: Consumer,
    C::Args: Clone + Sync,
{
    let mailbox = C::mailbox(&args).clone();
    ChildStart {
        child: C::CHILD,
        door: Arc::new(mailbox),
        start: Box::new(move |supervisor| {
            Box::pin(start_task::<C>(args.clone(), supervisor.clone()))
        }),
    }
}

/// An inbox-driven child started once: its failure ends the session, so a second start is
/// an error that names it.
pub fn once<C: Consumer>(args: C::Args) -> ChildStart {
    let mailbox = C::mailbox(&args).clone();
    let mut first = Some(args);
    ChildStart {
        child: C::CHILD,
        door: Arc::new(mailbox),
        start: Box::new(move |supervisor| {
            let first = first.take();
            let supervisor = supervisor.clone();
            Box::pin(async move {
                let args = first.ok_or_else(|| started_twice(C::CHILD))?;
                start_task::<C>(args, supervisor).await
            })
        }),
    }
}

/// A ractor actor started once by `start` (the transport, through its factory), linked to
/// the supervisor's cell it is given, reached through `door`.
pub fn once_with<F>(child: Child, door: Arc<dyn Door>, start: F) -> ChildStart
where
    F: FnOnce(ActorCell) -> BoxFuture<'static, Result<ActorCell, ActorProcessingErr>>
        + Send
        + 'static,
{
    // Boxed apart from the start function the supervisor keeps for the session's life:
    // what it captures (the transport's arguments, over a kilobyte) is freed once it ran.
    let mut start = Some(Box::new(start));
    ChildStart {
        child,
        door,
        start: Box::new(move |supervisor| match start.take() {
            Some(start) => {
                let started = (*start)(supervisor.get_cell());
                Box::pin(async move { started.await.map(Started::Actor) })
            }
            None => Box::pin(async move { Err(started_twice(child)) }),
        }),
    }
}

fn started_twice(child: Child) -> ActorProcessingErr {
    format!("the {child} is started once: it is not restarted").into()
}

/// The session's children as the supervisor holds them: one start per child, by child. A
/// session that does not record has no recorder.
#[derive(Default)]
pub struct Children(BTreeMap<Child, ChildStart>);

impl Children {
    /// Adds `start` under its child (replacing an earlier start of the same child).
    pub fn add(&mut self, start: ChildStart) {
        self.0.insert(start.child, start);
    }

    /// Whether the session has `child`.
    pub fn contains(&self, child: Child) -> bool {
        self.0.contains_key(&child)
    }

    /// The start of `child`, if the session has it.
    pub fn get_mut(&mut self, child: Child) -> Option<&mut ChildStart> {
        self.0.get_mut(&child)
    }

    /// Child `child`'s mailbox, whatever its types, if the session has it.
    pub fn door(&self, child: Child) -> Option<&dyn Door> {
        self.0.get(&child).map(|start| &*start.door)
    }

    /// Installs `hook` on every child's inbox, each speaking for its child.
    pub fn set_fault_hook(&self, hook: &Arc<dyn FaultHook>) {
        for (child, start) in &self.0 {
            start.door.set_fault_hook(*child, Arc::clone(hook));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::inbox::{Bound, Failed};
    use crate::mailbox::{Instance, Mailbox, NoMsg};

    /// Handles an item by waiting for ever when told to (stuck where no stop reaches it);
    /// says when its `stopped` ran.
    struct Stuckable {
        stopped: Arc<AtomicBool>,
    }

    #[derive(Clone)]
    struct Args {
        mailbox: Mailbox<bool, (), NoMsg>,
        stopped: Arc<AtomicBool>,
    }

    impl Consumer for Stuckable {
        type Item = bool;
        type Label = ();
        type Msg = NoMsg;
        type Args = Args;

        const CHILD: Child = Child::Router;
        const CHUNK: usize = 4;

        fn mailbox(args: &Args) -> &Mailbox<bool, (), NoMsg> {
            &args.mailbox
        }

        async fn start(
            args: Args,
            _failed: Option<Failed<()>>,
            _myself: &Instance<NoMsg>,
        ) -> Result<Self, ActorProcessingErr> {
            Ok(Stuckable {
                stopped: args.stopped,
            })
        }

        async fn handle(&mut self, stuck: bool) -> Result<(), ActorProcessingErr> {
            if stuck {
                std::future::pending::<()>().await;
            }
            Ok(())
        }

        async fn stopped(&mut self) -> Result<(), ActorProcessingErr> {
            self.stopped.store(true, Ordering::SeqCst);
            Ok(())
        }
    }

    async fn task_child(args: &Args) -> (TaskChild, Instance<NoMsg>) {
        let (instance, task) = spawn_consumer::<Stuckable, _>(args.clone(), |_| {})
            .await
            .unwrap();
        let child = TaskChild {
            instance: instance.control(),
            task,
        };
        (child, instance)
    }

    fn args() -> Args {
        Args {
            mailbox: Mailbox::new("stuckable", Bound::wait(8), |_| ()),
            stopped: Arc::default(),
        }
    }

    /// At the session's end a child asked to stop runs `stopped` and ends well before the
    /// deadline; one stuck where no stop reaches it is aborted at the deadline, so it does
    /// not outlive the session (before the bound, it was let go of and stayed for ever).
    #[tokio::test(start_paused = true)]
    async fn a_stopped_child_ends_by_itself_and_a_stuck_one_is_aborted_at_the_deadline() {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);

        let free = args();
        let (child, instance) = task_child(&free).await;
        free.mailbox.push(false).unwrap();
        child.stop();
        child.ended_by(deadline).await;
        assert!(free.stopped.load(Ordering::SeqCst), "its `stopped` ran");
        assert!(!instance.is_running());
        assert!(tokio::time::Instant::now() < deadline, "it ended by itself");

        let stuck = args();
        let (child, instance) = task_child(&stuck).await;
        stuck.mailbox.push(true).unwrap();
        // Let it take the item and get stuck on it.
        while !stuck.mailbox.is_empty() {
            tokio::task::yield_now().await;
        }
        child.stop();
        child.ended_by(deadline).await;
        assert_eq!(tokio::time::Instant::now(), deadline);
        // The abort takes effect when the runtime next polls the task.
        for _ in 0..100 {
            if !instance.is_running() {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(!instance.is_running(), "the stuck child was aborted");
        assert!(
            !stuck.stopped.load(Ordering::SeqCst),
            "a killed child runs nothing more"
        );
    }
}
