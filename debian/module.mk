# debian/: `make deb` builds the Debian packages (debian/control lists them) with
# dpkg-buildpackage into $(DEB_OUT), unsigned. The kvm guest's package is built with the rest
# (it fetches Debian's cloud kernel and builds the initramfs: `make kvm-kernel kvm-guest`);
# DEB_PROFILES=nokvm leaves it out. The package build has its own tree (debian/rules), and
# the calling make's jobserver is not passed down: dpkg-buildpackage runs its own -j2. No
# -dbgsym packages: $(DEB_OUT)/*.deb is what to install.
DEB_OUT ?= $(B)/debs
DEB_PROFILES ?=
.PHONY: deb
deb:
	rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)
	MAKEFLAGS= MAKELEVEL= DEB_DEST='$(abspath $(DEB_OUT))' DEB_BUILD_OPTIONS='parallel=2 noddebs' \
	    dpkg-buildpackage -b -uc $(if $(DEB_PROFILES),-P$(DEB_PROFILES)) \
	    --changes-file='$(abspath $(DEB_OUT))/calcroute.changes' \
	    --buildinfo-file='$(abspath $(DEB_OUT))/calcroute.buildinfo' \
	    --changes-option=-u'$(abspath $(DEB_OUT))' --buildinfo-option=-u'$(abspath $(DEB_OUT))'
	@ls $(DEB_OUT)/*.deb
