# systemd/: tmemd.service and the shipped tmemd.conf.  Installing them (and
# everything else) is mk/install.mk; their checks are tests/packaging/.

include mk/install.mk
