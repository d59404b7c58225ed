#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# census-probe - the guest side of `usbrig census` (busybox sh).  Embedded
# in usbrig at build time (the Makefile turns it into a C string) and put
# in the guest by every census scenario; harness/host/census.c writes the
# steps that call it, census_report.c reads what it records.
#
#   census-probe begin MOD            note /dev and the loaded modules
#   census-probe static K VID PID     load what the device's modaliases
#                                     name (as udev would), record
#   census-probe unload               unload what was loaded since begin
#   census-probe newid K VID PID MOD [CLASS]
#                                     load MOD by name, write new_id on
#                                     its drivers' bus, record, remove_id
#   census-probe replug K VID PID     record (after remove_id and re-plug)
#   census-probe end                  unload, tasks stuck in the kernel, the
#                                     module's part of the log
#   census-probe reset                end the boot when a task is stuck
#                                     or a device never enumerated
#
# Records go to /tmp/census/report.txt, one per line:
#   nodev PHASE K                     the device never showed up
#   drivers PHASE K BUS:NAME...       MOD's drivers (/sys/module/MOD/drivers)
#   intf PHASE K NUM CLASS NAME DRIVER
#   node PHASE K PATH                 a device node that appeared
#   newid K PATH STATUS TEXT          one new_id write (STATUS 0: it took)
#   newid-none K WHY                  no new_id to write
#   removeid K PATH STATUS TEXT
#   removeid-none K WHY               the driver has no remove_id
#   stuck PID COMM                    a task in D state after the phases
#   dmesg                             then the kernel log from the
#                                     module's begin mark to the end
# PHASE: static, newid-before (MOD loaded, before the write), newid, replug.
# The kernel log's marks of the phases ("usbrig-census: static K") are
# the scenario's own `write /dev/kmsg` steps, before each phase's attach
# (census.c, put_phase()); this writes the module's begin.

out=/tmp/census/report.txt
# (census_report.c knows this text: such a crash is no kernel report)
NODEV_RESET='no device enumerated; ending this boot for a fresh guest'
dir=/tmp/census
mkdir -p $dir

# (files are read with the shell's own `read`, links resolved with its own
# `cd -P`, and results passed in variables, not through $(...): a fork
# costs milliseconds in a guest without KVM, and these loops run often)

# find_dev VID PID: dev= the vhci device with these ids
find_dev() {
	dev=
	for d in /sys/bus/usb/devices/*; do
		[ -f $d/idVendor ] || continue
		read -r v <$d/idVendor
		[ "$v" = $1 ] || continue
		read -r p <$d/idProduct
		[ "$p" = $2 ] || continue
		cd -P $d 2>/dev/null || continue
		case $PWD in
		*vhci_hcd*) dev=${d##*/};;
		esac
		cd /
		[ -n "$dev" ] && return 0
	done
	return 1
}

# Are all interfaces of device $1's configuration registered?  The
# device's driver link appears before usb_generic's probe has set the
# configuration (the driver core links a driver before it probes), so a
# device with its link may have no interface yet: a modprobe by the
# interfaces' modaliases then loads nothing (seen: radio_si470x_usb's
# static row "no-driver" once in a whole census).
intfs_ready() {
	read -r want 2>/dev/null </sys/bus/usb/devices/$1/bNumInterfaces ||
		return 1
	[ -n "$want" ] || return 1
	got=0
	for i in /sys/bus/usb/devices/$1/$1:*; do
		[ -f $i/modalias ] && got=$((got + 1))
	done
	[ $got -ge $want ]
}

# tick VAR FAST - sleep 0.02 s while $VAR (hundredths of a second spent
# waiting) is below FAST, 0.1 s after; add the time slept to VAR
tick() {
	eval "t_was=\$$1"
	if [ $t_was -lt $2 ]; then
		sleep 0.02
		eval "$1=$((t_was + 2))"
	else
		sleep 0.1
		eval "$1=$((t_was + 10))"
	fi
}

# the device, once enumerated (its usb driver bound, its interfaces
# there), within 10 s (CENSUS_WAIT_DEV tenths of a second: `usbrig fuzz`
# waits less for devices that may never enumerate).  Looked for every
# 0.02 s in the first second (the kernel enumerates most devices within
# 0.5 s of the attach), then every 0.1 s.
wait_dev() {
	w_t=0	# hundredths of a second
	w_limit=$((${CENSUS_WAIT_DEV:-100} * 10))
	while [ $w_t -lt $w_limit ]; do
		find_dev $1 $2 && [ -L /sys/bus/usb/devices/$dev/driver ] &&
			intfs_ready $dev && return 0
		tick w_t 100
	done
	find_dev $1 $2
}

# snap DEV [PREFIX]: snapped= a line per interface of DEV, its number,
# class, name and driver (its names are s_*: a caller's `cls` is its own)
snap() {
	snapped=
	for s_i in /sys/bus/usb/devices/$1/$1:*; do
		[ -f $s_i/bInterfaceNumber ] || continue
		s_drv=none
		if [ -L $s_i/driver ] && cd -P $s_i/driver 2>/dev/null; then
			s_drv=${PWD##*/}
			cd /
		fi
		read -r s_num <$s_i/bInterfaceNumber
		read -r s_cls <$s_i/bInterfaceClass
		snapped="$snapped$2$s_num $s_cls ${s_i##*/} $s_drv
"
	done
}

# until the interfaces' drivers stay the same for 0.1 s (at most 5 s):
# a driver's probe runs within modprobe, new_id's write or the attach,
# so what is left to wait for is what a driver does later on its own (a
# firmware request, a configuration change, a deferred probe)
settle() {
	snap $1
	a=$snapped
	n=0
	same=0
	while [ $n -lt 100 ] && [ $same -lt 2 ]; do
		sleep 0.05
		snap $1
		b=$snapped
		if [ "$a" = "$b" ]; then
			same=$((same + 1))
		else
			same=0
		fi
		a=$b
		n=$((n + 1))
	done
}

record() {	# record PHASE K DEV MOD
	snap $3 "intf $1 $2 "
	printf '%s' "$snapped" >>$out
	drvs=
	for d in /sys/module/$4/drivers/*; do
		[ -e "$d" ] && drvs="$drvs ${d##*/}"
	done
	echo "drivers $1 $2$drvs" >>$out
	# new nodes, but the device's own usbfs node
	find /dev | awk -v p="node $1 $2 " 'NR == FNR { old[$0] = 1; next }
		!($0 in old) && !/^\/dev\/bus\/usb/ { print p $0 }' \
		$dir/dev0 - | sort >>$out
}

mark() {
	echo "usbrig-census: $*" >/dev/kmsg
}

# end this boot now (the kernel's crash through sysrq: the host sees the
# panic and boots a fresh guest); a kernel built without CONFIG_MAGIC_SYSRQ
# cannot, and the mark says so once
end_boot() {
	if [ -w /proc/sysrq-trigger ]; then
		echo c >/proc/sysrq-trigger
	elif [ ! -e $dir/no-sysrq ]; then
		: >$dir/no-sysrq
		mark "cannot end this boot: no /proc/sysrq-trigger (CONFIG_MAGIC_SYSRQ is off)"
	fi
}

# tasks in uninterruptible sleep, twice 0.25 s apart (I/O passes through
# D; a probe stuck on a device that never answers stays); no second look
# when the first found none, as for most modules
stuck_pass() {
	for s in /proc/[0-9]*/stat; do
		read -r pid comm st rest <$s 2>/dev/null || continue
		[ "$st" = D ] && echo "$pid $comm"
	done | sort >$1
}

stuck() {
	stuck_pass $dir/stuck1
	[ -s $dir/stuck1 ] || return 0
	sleep 0.25
	stuck_pass $dir/stuck2
	grep -xF -f $dir/stuck1 $dir/stuck2 | sed 's/^/stuck /'
}

# bounded SECONDS CMD...: run CMD; when it has not returned after
# SECONDS (a probe stuck waiting for the device), end the boot there, so
# that the report is this module's and the next module gets a fresh guest
bounded() {	# (busybox sh has no `local`: its names are its own)
	b_limit=$(($1 * 100))
	shift
	"$@" &
	b_pid=$!
	b_t=0	# hundredths of a second: first every 0.02 s (most commands
		# are done within 0.2 s), then every 0.1 s
	while kill -0 $b_pid 2>/dev/null; do
		if [ $b_t -ge $b_limit ]; then
			mark "$(cat $dir/module) stuck: '$*' has not returned in $((b_limit / 100)) s; ending this boot"
			end_boot
		fi
		tick b_t 20
	done
	wait $b_pid
}

# left= the modules loaded since begin, newest first (as /proc/modules
# lists them: a module comes before those it uses)
loaded_since() {
	read -r mods0 <$dir/mods0
	left=
	while read -r m rest; do
		case " $mods0 " in
		*" $m "*) ;;
		*) left="$left $m";;
		esac
	done </proc/modules
}

# what was loaded since begin, in up to three passes (a module goes once
# its users have; in /proc/modules' order the first pass is most often
# the last)
unload() {
	for pass in 1 2 3; do
		loaded_since
		[ -n "$left" ] || return 0
		for m in $left; do
			rmmod $m 2>/dev/null
		done
	done
}

case $1 in
begin)
	: >$out
	rm -f $dir/stuck
	echo $2 >$dir/module
	find /dev >$dir/dev0
	mods0=
	while read -r m rest; do
		mods0="$mods0 $m"
	done </proc/modules
	echo "$mods0" >$dir/mods0
	mark begin $2
	;;
static)
	if ! wait_dev $3 $4; then
		echo "nodev static $2" >>$out
		exit 0
	fi
	for i in /sys/bus/usb/devices/$dev/$dev:*; do
		[ -f $i/modalias ] && bounded 25 modprobe -q "$(cat $i/modalias)"
	done
	settle $dev
	record static $2 $dev "$(cat $dir/module)"
	;;
unload)
	unload
	;;
newid)
	k=$2 vid=$3 pid=$4 mod=$5 cls=$6
	if ! wait_dev $vid $pid; then
		echo "nodev newid $k" >>$out
		exit 0
	fi
	bounded 25 modprobe -q $mod
	settle $dev
	record newid-before $k $dev $mod
	# a usb-serial driver takes its ids on the usb-serial bus (which
	# passes them on to its usb driver); any other on the usb bus
	paths=
	for d in $(ls /sys/module/$mod/drivers 2>/dev/null); do
		case $d in
		usb-serial:*) p=/sys/bus/usb-serial/drivers/${d#usb-serial:}/new_id
			[ -e $p ] && paths="$paths $p";;
		esac
	done
	if [ -z "$paths" ]; then
		for d in $(ls /sys/module/$mod/drivers 2>/dev/null); do
			case $d in
			usb:*) p=/sys/bus/usb/drivers/${d#usb:}/new_id
				[ -e $p ] && paths="$paths $p";;
			esac
		done
	fi
	if [ -z "$paths" ]; then
		echo "newid-none $k no driver of $mod has a new_id file (drivers: $(ls /sys/module/$mod/drivers 2>/dev/null | tr '\n' ' '))" >>$out
	fi
	for p in $paths; do
		bounded 25 sh -c "printf '%s' '$vid $pid${cls:+ $cls}' >$p" \
			2>$dir/err
		echo "newid $k $p $? $(cat $dir/err)" >>$out
	done
	settle $dev
	record newid $k $dev $mod
	# (the usb-serial bus has no remove_id, and the usb driver usbserial
	# registers for the module takes no dynamic ids of its own: such an
	# id stays until the module is unloaded)
	for p in $paths; do
		r=${p%new_id}remove_id
		if [ ! -e $r ]; then
			echo "removeid-none $k ${p%/new_id} has no remove_id" >>$out
			continue
		fi
		err=$(printf '%s' "$vid $pid" 2>&1 >$r)
		echo "removeid $k $r $? $err" >>$out
	done
	;;
replug)
	if ! wait_dev $3 $4; then
		echo "nodev replug $2" >>$out
		exit 0
	fi
	settle $dev
	record replug $2 $dev "$(cat $dir/module)"
	;;
end)
	unload
	stuck >$dir/stuck
	cat $dir/stuck >>$out
	echo dmesg >>$out
	# the log from this module's begin on: the boot's earlier modules
	# are not its business (census_report.c skips them), and the whole
	# log, up to 128 KiB late in a boot, went back with every module
	read -r m <$dir/module
	dmesg | sed -n "/ usbrig-census: begin $m\$/,\$p" >>$out
	;;
reset)
	# a driver stuck in probe or disconnect holds its locks for good:
	# every later module would wait on them, and the hung-task report
	# would come during another module's phases.  End the boot now; the
	# next one goes on with the next module.  (What `end` found: sampling
	# again would cost another half second per module.)
	if [ -s $dir/stuck ]; then
		mark "$(cat $dir/module) left tasks stuck in the kernel:" \
			$(sed 's/^stuck //' $dir/stuck)
		end_boot
	fi
	# a device that never enumerated: this boot's USB stack may be
	# wedged by an earlier module (a probe that waits for good without a
	# task in D state).  End the boot without blaming this module: the
	# census runs it again in a fresh guest (census.c, retry_nodev()).
	if grep -q '^nodev ' $out; then
		mark "$(cat $dir/module): $NODEV_RESET"
		end_boot
	fi
	;;
esac
exit 0
