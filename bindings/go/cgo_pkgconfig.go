//go:build !shardplan_checkout

package shardplan

// The default: an installed libshardplan, found through pkg-config
// (tools/install.sh writes PREFIX/lib/pkgconfig/shardplan.pc; pkg-config
// searches /usr/local and /usr by itself, any other prefix through
// PKG_CONFIG_PATH=PREFIX/lib/pkgconfig). That gives -IPREFIX/include and
// -LPREFIX/lib -lshardplan: the shared library, loaded at run time by its
// soname, libshardplan.so.1, which the dynamic linker finds in /usr/local/lib
// or /usr/lib (ldconfig) and elsewhere through LD_LIBRARY_PATH=PREFIX/lib or
// an rpath added with CGO_LDFLAGS=-Wl,-rpath,PREFIX/lib (a .pc file gives none).
// See README.md, "Where the library comes from".

// #cgo pkg-config: shardplan
import "C"
