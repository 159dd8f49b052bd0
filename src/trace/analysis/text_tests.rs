//! Tests of text.rs: the kernel's text layout, render then parse round trips of every kind,
//! lines as a real kernel prints them, task names learnt from sched events.

use super::*;

fn ev(kind: EventKind) -> Event {
    Event {
        ts_ns: 438_560_045_123,
        cpu: 1,
        pid: 9463,
        flags: IRQS_OFF | HARDIRQ | NEED_RESCHED | PREEMPT_RESCHED,
        preempt_count: 2,
        kind,
    }
}

fn all_kinds() -> Vec<EventKind> {
    let t = |c: &str, pid| TaskRef {
        comm: c.into(),
        pid,
        prio: 120,
    };
    vec![
        EventKind::HrtimerStart {
            hrtimer: 0xffff888627d1c6f8,
            function: 0xffffffff81234560,
            expires_ns: 438564000000,
            softexpires_ns: 438564000000,
            mode: 10,
        },
        EventKind::HrtimerExpireEntry {
            hrtimer: 1,
            now_ns: 438560040867,
            function: 2,
        },
        EventKind::HrtimerExpireExit { hrtimer: 3 },
        EventKind::HrtimerCancel { hrtimer: 4 },
        EventKind::SchedWaking {
            task: t("my task", 12),
            target_cpu: 1,
        },
        EventKind::SchedWakeup {
            task: t("kworker/0:1", 13),
            target_cpu: 0,
        },
        EventKind::SchedSwitch {
            prev: t("bash", 9463),
            prev_state: 0x102,
            next: t("swapper/0", 0),
        },
        EventKind::IrqHandlerEntry {
            irq: 36,
            name: "virtio1-req.0".into(),
        },
        EventKind::IrqHandlerExit { irq: 36, ret: 1 },
        EventKind::SoftirqEntry { vec: 7 },
        EventKind::SoftirqExit { vec: 1 },
        EventKind::SoftirqRaise { vec: 9 },
        EventKind::VectorEntry {
            name: "local_timer".into(),
            vector: 236,
        },
        EventKind::VectorExit {
            name: "call_function_single".into(),
            vector: 251,
        },
        EventKind::PageFault {
            user: true,
            address: 0x55883362bedc,
            ip: 0x55881b28f2c3,
            error_code: 7,
        },
        EventKind::PageFault {
            user: false,
            address: 0xffff1,
            ip: 0xffff2,
            error_code: 2,
        },
        EventKind::IpiSend {
            targets: vec![1],
            callsite: 5,
            callback: 6,
        },
        EventKind::IpiSend {
            targets: vec![0, 1, 2, 5],
            callsite: 5,
            callback: 6,
        },
        EventKind::RseqUpdate { cpu_id: 1 },
        EventKind::Other {
            system: "sched".into(),
            name: "sched_migrate_task".into(),
            fields: vec![("comm".into(), "a".into()), ("pid".into(), "3".into())],
        },
    ]
}

#[test]
fn kernel_layout() {
    let l = render_text_line(&ev(EventKind::HrtimerExpireExit {
        hrtimer: 0xffff888627d1c6f8,
    }));
    assert_eq!(
        l,
        "           <...>-9463    [001] dNh2.   438.560045: hrtimer_expire_exit: hrtimer=ffff888627d1c6f8"
    );
}

#[test]
fn render_then_parse_round_trips() {
    for k in all_kinds() {
        let e = ev(k);
        let back = parse_text_line(&render_text_line_ns(&e)).unwrap();
        assert_eq!(back, e, "{}", render_text_line_ns(&e));
        let us = parse_text_line(&render_text_line(&e)).unwrap();
        assert_eq!(us.ts_ns, 438_560_045_000);
        assert_eq!(us.kind, e.kind);
    }
}

#[test]
fn reads_real_kernel_lines() {
    let l = "            bash-9463    [000] dNh2.   438.560980: hrtimer_start: hrtimer=ffff888627c1c6f8 function=tick_nohz_handler expires=438564000000 softexpires=438564000000 mode=ABS was_armed=0";
    let e = parse_text_line(l).unwrap();
    assert_eq!((e.cpu, e.pid, e.ts_ns), (0, 9463, 438_560_980_000));
    assert_eq!(flags_text(e.flags, e.preempt_count), "dNh2.");
    assert!(matches!(
        e.kind,
        EventKind::HrtimerStart {
            hrtimer: 0xffff888627c1c6f8,
            function: 0,
            mode: 0,
            ..
        }
    ));
    let l = "   my-odd -name-12      [001] ..s1.   438.560051: softirq_entry: vec=7 [action=SCHED]";
    let e = parse_text_line(l).unwrap();
    assert_eq!(e.pid, 12);
    assert_eq!(e.kind, EventKind::SoftirqEntry { vec: 7 });
    assert!(parse_text_line("# tracer: nop").is_none());
}

#[test]
fn renderer_names_tasks_from_sched_events() {
    let mut r = TextRenderer::default();
    let mut w = ev(EventKind::SchedWaking {
        task: TaskRef {
            comm: "rt".into(),
            pid: 77,
            prio: 4,
        },
        target_cpu: 1,
    });
    w.pid = 5;
    r.render(&w);
    let mut x = ev(EventKind::RseqUpdate { cpu_id: 1 });
    x.pid = 77;
    assert!(r.render(&x).trim_start().starts_with("rt-77 "));
}
