// SPDX-License-Identifier: GPL-2.0
/*
 * The xenbus frontend for device/tmem/0 (layout in man/tmem.7).
 *
 * The shared region (ring header, entries, data slots) is allocated and
 * granted to backend_domid once, at probe, and an event channel is
 * allocated and bound once.  Each connection then only resets the
 * region and republishes it:
 *
 *   backend InitWait  -> zero the region, write its header; write
 *                        protocol-version, geometry, ring-pages, ring-refN,
 *                        event-channel, and the session our pools are
 *                        in if we have any; Initialised
 *   backend Connected -> attach the ring (requests flow from here on),
 *                        map the pools onto the backend's: the ones it
 *                        kept (resumed-pools, under the session our
 *                        pools were made in) come back with their pages,
 *                        the rest are made anew (shim_ops_resume);
 *                        Connected
 *   backend Closing   -> detach: waiters fail, puts are refused and gets
 *                        miss from here on; Closed
 *   backend InitWait again (tmemd restarted) -> Initialising, and round
 *
 * Keeping the grants across connections means a restarting backend
 * never races the frontend's gnttab_end_foreign_access; they are ended
 * (and the pages handed back to the grant code to free once unmapped)
 * only when the device goes away.
 *
 * Save, restore and migration (xl save/restore/migrate; man/tmem_shim.4):
 * the guest goes on in a new domain, whose grant table and event
 * channels start empty, served by tmemd there, which hands it the pools
 * the old domain parked.  As blkfront does, resume grants the region
 * again (the same refs, the frames' new gfns) and binds a new event
 * channel; the handshake then runs as after a backend restart, the
 * pools are taken back under the session they were made in, and the
 * requests cut off by the suspend are repeated (persist_wait_ms).
 * xenbus resumes a device only if its backend nodes are already there;
 * tmemd writes them when the new domain appears, which may be just after
 * it runs, so a suspend also starts a watch that resumes the device
 * itself once they are (tmem_front_watch_resume).
 */
#include <linux/err.h>
#include <linux/interrupt.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <xen/events.h>
#include <xen/grant_table.h>
#include <xen/page.h>
#include <xen/xen.h>
#include <xen/xenbus.h>

#include "tmem_shim.h"

struct tmem_front {
	struct xenbus_device *dev;
	void *region;
	size_t size;
	unsigned int nr_pages;
	unsigned int nr_entries;
	unsigned int nr_slots;
	grant_ref_t *refs;
	unsigned int nr_granted;
	evtchn_port_t port;
	int irq;
	char session[24];	/* the backend's "session" our pools are in */
	/* A suspend not yet followed by a resume; the domid it left. */
	bool suspended;
	unsigned int suspend_domid;
	unsigned int resume_tries;
	struct delayed_work resume_work;
	u64 resumes;		/* restores and migrations seen */
};

static irqreturn_t tmem_front_irq(int irq, void *dev_id)
{
	shim_ring_poll(&tmem_shim.ring);
	return IRQ_HANDLED;
}

/* Ends a grant; the page is freed by the grant code once unmapped. */
static void tmem_end_access(grant_ref_t ref, struct page *pg)
{
#if TMEM_GNTTAB_END_PAGE
	gnttab_end_foreign_access(ref, pg);
#else
	gnttab_end_foreign_access(ref, 0, (unsigned long)page_address(pg));
#endif
}

static void tmem_front_free(struct tmem_front *f)
{
	unsigned int i;

	if (!f)
		return;
	cancel_delayed_work_sync(&f->resume_work);
	shim_ring_detach(&tmem_shim.ring);
	if (f->irq > 0) {
		WRITE_ONCE(tmem_shim.irq, 0);
		unbind_from_irqhandler(f->irq, f);
	} else if (f->port) {
		xenbus_free_evtchn(f->dev, f->port);
	}
	/*
	 * Each granted page goes back to the grant code, which frees it
	 * once the backend has unmapped it; the rest we free ourselves.
	 */
	for (i = 0; i < f->nr_pages; i++) {
		struct page *pg = virt_to_page(f->region + i * PAGE_SIZE);

		if (i < f->nr_granted)
			tmem_end_access(f->refs[i], pg);
		else
			__free_page(pg);
	}
	kfree(f->refs);
	kfree(f);
}

static int tmem_front_grant(struct tmem_front *f)
{
	unsigned int i;
	int ref;

	for (i = 0; i < f->nr_pages; i++) {
		ref = gnttab_grant_foreign_access(tmem_param_backend_domid,
			virt_to_gfn(f->region + i * PAGE_SIZE), 0);
		if (ref < 0)
			return ref;
		f->refs[i] = ref;
		f->nr_granted = i + 1;
	}
	return 0;
}

static void tmem_front_watch_resume(struct work_struct *w);

static struct tmem_front *tmem_front_alloc(struct xenbus_device *dev)
{
	struct tmem_front *f = kzalloc(sizeof(*f), GFP_KERNEL);
	unsigned int i;

	if (!f)
		return NULL;
	f->dev = dev;
	f->nr_entries = tmem_param_ring_entries;
	f->nr_slots = tmem_param_nr_slots;
	f->size = tmem_region_size(f->nr_entries, f->nr_slots);
	f->nr_pages = f->size >> PAGE_SHIFT;
	f->refs = kcalloc(f->nr_pages, sizeof(*f->refs), GFP_KERNEL);
	/* alloc_pages_exact splits: each page can be freed on its own. */
	f->region = alloc_pages_exact(f->size, GFP_KERNEL | __GFP_ZERO);
	if (!f->refs || !f->region) {
		kfree(f->refs);
		if (f->region)
			free_pages_exact(f->region, f->size);
		kfree(f);
		return NULL;
	}
	for (i = 0; i < f->nr_pages; i++)
		f->refs[i] = INVALID_GRANT_REF;
	INIT_DELAYED_WORK(&f->resume_work, tmem_front_watch_resume);
	return f;
}

/* One xenstore transaction with everything the backend needs. */
static int tmem_front_publish(struct tmem_front *f)
{
	struct xenbus_device *dev = f->dev;
	struct xenbus_transaction xbt;
	char name[24];
	unsigned int i;
	int err;

again:
	err = xenbus_transaction_start(&xbt);
	if (err)
		return err;
	err = xenbus_printf(xbt, dev->nodename, "protocol-version", "%u",
			    TMEM_RING_VERSION);
	err = err ?: xenbus_printf(xbt, dev->nodename, "ring-entries", "%u",
				   f->nr_entries);
	err = err ?: xenbus_printf(xbt, dev->nodename, "nr-slots", "%u",
				   f->nr_slots);
	err = err ?: xenbus_printf(xbt, dev->nodename, "ring-pages", "%u",
				   f->nr_pages);
	for (i = 0; !err && i < f->nr_pages; i++) {
		snprintf(name, sizeof(name), "ring-ref%u", i);
		err = xenbus_printf(xbt, dev->nodename, name, "%u",
				    f->refs[i]);
	}
	err = err ?: xenbus_printf(xbt, dev->nodename, "event-channel", "%u",
				   f->port);
	/* Where our pools were made: a tmemd on another host than the one
	 * we run on now has them, after a migration (man/tmem.7). */
	if (!err && f->session[0])
		err = xenbus_printf(xbt, dev->nodename, "session", "%s",
				    f->session);
	else if (!err)
		xenbus_rm(xbt, dev->nodename, "session");
	if (err) {
		xenbus_transaction_end(xbt, 1);
		return err;
	}
	err = xenbus_transaction_end(xbt, 0);
	if (err == -EAGAIN)
		goto again;
	return err;
}

/*
 * Backend is waiting for us: a fresh region, published.  The ring is
 * not attached yet, so nothing is posted before the backend maps it.
 */
static void tmem_front_publish_ring(struct tmem_front *f)
{
	int err;

	shim_ring_detach(&tmem_shim.ring);
	memset(f->region, 0, f->size);
	shim_ring_write_header(f->region, f->nr_entries, f->nr_slots);
	err = tmem_front_publish(f);
	if (err) {
		xenbus_dev_fatal(f->dev, err, "publishing the tmem ring");
		return;
	}
	xenbus_switch_state(f->dev, XenbusStateInitialised);
}

/*
 * The pools a restarted backend kept for us (man/tmem.7): resumed-pools,
 * trusted only under the session our pools were made in, since a
 * backend on another store could hold other pages under those ids.
 */
static void tmem_front_take_pools(struct tmem_front *f)
{
	struct xenbus_device *dev = f->dev;
	unsigned int listed = 0, kept = 0;
	u64 before = tmem_shim.ops.pools_resumed;
	char *session;

	if (xenbus_scanf(XBT_NIL, dev->otherend, "resumed-pools", "%x",
			 &listed) != 1)
		listed = 0;
	session = xenbus_read(XBT_NIL, dev->otherend, "session", NULL);
	if (IS_ERR(session)) {
		f->session[0] = '\0';
	} else {
		if (f->session[0] && !strcmp(session, f->session))
			kept = listed;
		strscpy(f->session, session, sizeof(f->session));
		kfree(session);
	}
	shim_ops_resume(&tmem_shim.ops, kept, listed);
	if (kept)
		dev_info(&dev->dev, "backend restarted: %llu pools taken back with their pages\n",
			 (unsigned long long)(tmem_shim.ops.pools_resumed - before));
	else if (listed)
		dev_warn(&dev->dev, "backend holds pools of another session (%#x): dropped\n",
			 listed);
}

/* Backend mapped the region: start posting, then map the pools. */
static void tmem_front_connected(struct tmem_front *f)
{
	int err = shim_ring_attach(&tmem_shim.ring, f->region, f->nr_entries,
				   f->nr_slots);

	if (err) {
		xenbus_dev_fatal(f->dev, err, "attaching the tmem ring");
		return;
	}
	tmem_front_take_pools(f);
	xenbus_switch_state(f->dev, XenbusStateConnected);
	dev_info(&f->dev->dev, "connected to tmem backend in domain %d\n",
		 f->dev->otherend_id);
}

static void tmem_backend_changed(struct xenbus_device *dev,
				 enum xenbus_state backend_state)
{
	struct tmem_front *f = dev_get_drvdata(&dev->dev);

	switch (backend_state) {
	case XenbusStateInitWait:
		if (dev->state == XenbusStateClosed ||
		    dev->state == XenbusStateConnected)
			xenbus_switch_state(dev, XenbusStateInitialising);
		if (dev->state == XenbusStateInitialising)
			tmem_front_publish_ring(f);
		break;
	case XenbusStateConnected:
		if (dev->state == XenbusStateInitialised)
			tmem_front_connected(f);
		break;
	case XenbusStateClosing:
	case XenbusStateClosed:
		shim_ring_detach(&tmem_shim.ring);
		if (dev->state != XenbusStateClosed) {
			dev_info(&dev->dev, "tmem backend went away\n");
			xenbus_frontend_closed(dev);
		}
		break;
	default:
		break;
	}
}

/* A new event channel to the backend, bound to our handler. */
static int tmem_front_bind(struct tmem_front *f)
{
	int err = xenbus_alloc_evtchn(f->dev, &f->port);

	if (err)
		return err;
	err = bind_evtchn_to_irqhandler(f->port, tmem_front_irq, 0, "tmem_shim", f);
	if (err < 0) {
		xenbus_free_evtchn(f->dev, f->port);
		f->port = 0;
		return err;
	}
	f->irq = err;
	WRITE_ONCE(tmem_shim.irq, f->irq);
	return 0;
}

/*
 * Exported (GPL) by every kernel with xenbus, but declared only in
 * drivers/xen/xenbus/xenbus.h: what xenbus runs for each device at a
 * resume, run again by tmem_front_watch_resume when it failed.
 */
int xenbus_dev_resume(struct device *dev);

static unsigned int tmem_own_domid(void)
{
	return xenbus_read_unsigned("domid", "", DOMID_INVALID);
}

static int tmem_front_suspend(struct xenbus_device *dev)
{
	struct tmem_front *f = dev_get_drvdata(&dev->dev);

	if (!f)
		return 0;
	f->suspended = true;
	f->suspend_domid = tmem_own_domid();
	f->resume_tries = 0;
	/* Runs once the domain runs again, wherever that is. */
	schedule_delayed_work(&f->resume_work, HZ);
	return 0;
}

/*
 * In a new domain: the old grants and event channel are gone.  Requests
 * in flight lose their answers (persistent ones wait and are repeated);
 * the region is granted again under the same refs, now pointing at the
 * frames' gfns here, and a new channel is bound.  xenbus then watches the
 * backend, whose InitWait starts the handshake (tmem_backend_changed).
 */
static int tmem_front_resume(struct xenbus_device *dev)
{
	struct tmem_front *f = dev_get_drvdata(&dev->dev);
	unsigned int i;

	if (!f)
		return 0;
	f->suspended = false;
	f->resumes++;
	shim_ring_detach(&tmem_shim.ring);
	if (f->irq > 0) {
		WRITE_ONCE(tmem_shim.irq, 0);
		unbind_from_irqhandler(f->irq, f);
	}
	f->irq = 0;
	f->port = 0;
	for (i = 0; i < f->nr_granted; i++)
		gnttab_grant_foreign_access_ref(f->refs[i], tmem_param_backend_domid,
			virt_to_gfn(f->region + i * PAGE_SIZE), 0);
	dev_info(&dev->dev, "resumed in domain %u (restore or migration): reconnecting\n",
		 tmem_own_domid());
	return tmem_front_bind(f);
}

/*
 * After a suspend: if xenbus could not resume the device (its backend
 * nodes were not there yet), resume it once they are.  Same domid: the
 * suspend was cancelled (xl save -c, a failed save) and the old ring
 * goes on; nothing to do.
 */
static void tmem_front_watch_resume(struct work_struct *w)
{
	struct tmem_front *f = container_of(to_delayed_work(w), struct tmem_front,
					    resume_work);
	int err;

	if (!f->suspended)
		return;
	if (tmem_own_domid() == f->suspend_domid) {
		f->suspended = false;
		return;
	}
	/* The old ring is nobody's now: requests wait for the new one. */
	shim_ring_detach(&tmem_shim.ring);
	err = xenbus_dev_resume(&f->dev->dev);
	if (!err || !f->suspended)
		return;
	if (++f->resume_tries % 30 == 1)
		dev_warn(&f->dev->dev, "no tmem backend in this domain yet (%d); waiting\n", err);
	schedule_delayed_work(&f->resume_work, HZ);
}

static int tmem_front_probe(struct xenbus_device *dev,
			    const struct xenbus_device_id *id)
{
	struct tmem_front *f;
	int err;

	if (dev->otherend_id != tmem_param_backend_domid) {
		dev_err(&dev->dev,
			"backend is domain %d but backend_domid=%d: not connecting\n",
			dev->otherend_id, tmem_param_backend_domid);
		return -EINVAL;
	}
	f = tmem_front_alloc(dev);
	if (!f)
		return -ENOMEM;
	dev_set_drvdata(&dev->dev, f);
	err = tmem_front_grant(f);
	err = err ?: tmem_front_bind(f);
	if (err)
		goto fail;
	return 0;
fail:
	xenbus_dev_fatal(dev, err, "setting up the tmem ring");
	dev_set_drvdata(&dev->dev, NULL);
	tmem_front_free(f);
	return err;
}

#if TMEM_XENBUS_REMOVE_VOID
static void tmem_front_remove(struct xenbus_device *dev)
#else
static int tmem_front_remove(struct xenbus_device *dev)
#endif
{
	tmem_front_free(dev_get_drvdata(&dev->dev));
	dev_set_drvdata(&dev->dev, NULL);
#if !TMEM_XENBUS_REMOVE_VOID
	return 0;
#endif
}

static const struct xenbus_device_id tmem_front_ids[] = {
	{ "tmem" },
	{ "" }
};

static struct xenbus_driver tmem_front_driver = {
	.ids = tmem_front_ids,
	.probe = tmem_front_probe,
	.remove = tmem_front_remove,
	.suspend = tmem_front_suspend,
	.resume = tmem_front_resume,
	.otherend_changed = tmem_backend_changed,
};

int tmem_xenbus_init(void)
{
	if (!xen_domain())
		return -ENODEV;
	return xenbus_register_frontend(&tmem_front_driver);
}

void tmem_xenbus_exit(void)
{
	if (xen_domain())
		xenbus_unregister_driver(&tmem_front_driver);
}
