#!/bin/sh
# libxl hotplug script for the e2e-xen guests' disks ("script=" in the xl
# disk spec): dom0 has no bash for Xen's own scripts/block, and needs
# nothing more than blkback's physical-device for a whole block device.
# Called as: vbd-hotplug.sh add|remove, with XENBUS_PATH in the environment.
case "$1" in
add)
	dev=$(xenstore-read "$XENBUS_PATH/params") || exit 1
	[ -b "$dev" ] || { xenstore-write "$XENBUS_PATH/hotplug-error" "$dev is not a block device"; exit 1; }
	xenstore-write "$XENBUS_PATH/physical-device" "$(stat -L -c '%t:%T' "$dev")" \
		"$XENBUS_PATH/physical-device-path" "$dev" \
		"$XENBUS_PATH/hotplug-status" connected
	;;
remove) ;;
esac
