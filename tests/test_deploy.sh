#!/bin/sh
# deploy/'s Kubernetes manifests, offline: every object against its Kubernetes schema and
# every field name against the schemas' (deploy/validate/validate.mjs, installed by
# scripts/k8s-validator.sh), a deliberately broken copy of each kind of mistake refused, the
# security settings deploy/README.md promises compared exactly, the seccomp profile leaving
# the ns tier its system calls, the AppArmor profile parsed by apparmor_parser where it is
# installed, and the image the manifests name being the one `make image` tags.
. tests/lib.sh
DIR=${DEPLOY_VALIDATE_DIR:-build/deploy-validate}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! why=$(scripts/k8s-validator.sh "$DIR" 2>&1); then
    unavailable test_deploy "$why"
    finish
fi
V="/usr/bin/node $DIR/validate.mjs"

expect "the manifests validate" "ok deploy/batch-job.yaml Job/calcroute-batch
ok deploy/secrets.yaml Secret/calcroute-token
ok deploy/secrets.yaml Secret/calcroute-ledger
ok deploy/serve.yaml Deployment/calcroute
ok deploy/serve.yaml Service/calcroute
ok deploy/serve.yaml HorizontalPodAutoscaler/calcroute
exit 0" "$($V deploy/batch-job.yaml deploy/secrets.yaml deploy/serve.yaml 2>&1; echo "exit $?")"

# broken NAME SED-EXPRESSION WANT: serve.yaml with one mistake must be refused, saying where.
broken() {
    sed "$2" deploy/serve.yaml >"$tmp/serve.yaml"
    cmp -s deploy/serve.yaml "$tmp/serve.yaml" && { bad "$1: the edit changed nothing"; return; }
    out=$($V "$tmp/serve.yaml" 2>&1)
    rc=$?
    expect "$1" "$3
exit 1" "$(printf '%s\n' "$out" | grep -v '^ok '; echo "exit $rc")"
}
broken "a misspelt field" 's/hostUsers: false/hostUser: false/' \
    "FAIL $tmp/serve.yaml Deployment/calcroute: /spec/template/spec/hostUser: no Kubernetes schema has this field"
broken "a wrong type" 's/replicas: 2/replicas: two/' \
    "FAIL $tmp/serve.yaml Deployment/calcroute: /spec/replicas must be integer"
broken "a value outside the enum" 's/type: Localhost$/type: Lenient/' \
    "FAIL $tmp/serve.yaml Deployment/calcroute: /spec/template/spec/securityContext/appArmorProfile/type must be equal to one of the allowed values; /spec/template/spec/securityContext/seccompProfile/type must be equal to one of the allowed values"
broken "an unknown API version" 's|autoscaling/v2|autoscaling/v9|' \
    "FAIL $tmp/serve.yaml HorizontalPodAutoscaler/calcroute: no schema for apiVersion autoscaling/v9 kind HorizontalPodAutoscaler"
printf 'kind: [\n' >"$tmp/bad.yaml"
expect "a YAML syntax error" "FAIL $tmp/bad.yaml: unexpected end of the stream within a flow collection (2:1)
exit 1" "$($V "$tmp/bad.yaml" 2>&1; echo "exit $?")"

# What the pods promise (deploy/README.md): their own user namespace, not root, the
# Localhost seccomp and AppArmor profiles, nothing privileged, no capability, a read-only
# root, limits; /proc unmasked for the ns tier's own proc mount.
expect "the pods' security settings" "Job/calcroute-batch hostUsers=false automountServiceAccountToken=false runAsNonRoot=true runAsUser=10001 runAsGroup=10001 fsGroup=undefined seccomp=Localhost:calcroute-ns.json apparmor=Localhost:calcroute-serve hostNetwork=false hostPID=false volumes=corpus:persistentVolumeClaim,tmp:emptyDir
  batch privileged=false allowPrivilegeEscalation=false readOnlyRootFilesystem=true drop=ALL add= procMount=Unmasked limits=cpu,memory requests=cpu,memory
Deployment/calcroute hostUsers=false automountServiceAccountToken=false runAsNonRoot=true runAsUser=10001 runAsGroup=10001 fsGroup=10001 seccomp=Localhost:calcroute-ns.json apparmor=Localhost:calcroute-serve hostNetwork=false hostPID=false volumes=tmp:emptyDir,token:secret
  serve privileged=false allowPrivilegeEscalation=false readOnlyRootFilesystem=true drop=ALL add= procMount=Unmasked limits=cpu,memory,ephemeral-storage requests=cpu,memory,ephemeral-storage" \
    "$($V --settings deploy/batch-job.yaml deploy/serve.yaml 2>&1)"

# The uid the pods run as is the image's user (deploy/module.mk).
expect "runAsUser is the image's uid" "IMAGE_UID := 10001" "$(grep '^IMAGE_UID :=' deploy/module.mk)"
version=$(sed -n 's/^#define CR_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/calcroute.h | paste -sd.)
expect "the manifests name make image's tag" "deploy/batch-job.yaml:localhost/calcroute:$version
deploy/serve.yaml:localhost/calcroute:$version" "$(grep -o 'image: .*' deploy/*.yaml | sed 's/image: //')"

# The image carries what sandboxed code may import: install-deps.sh's python3-* packages but
# those that build and test calcroute.
expect "the image's python3 packages are install-deps.sh's" \
    "$(grep -o 'python3-[a-z][a-z]*' scripts/install-deps.sh | grep -vx 'python3-\(venv\|setuptools\|wheel\|pip\|pytest\)' | sort)" \
    "$(sed -n '/^IMAGE_PACKAGES :=/,/[^\\]$/p' deploy/module.mk | grep -o 'python3-[a-z][a-z]*' | sort)"

# The seccomp profile: what the ns tier calls is allowed, what the runtime's default refuses
# and the tier does not need stays refused.
expect "the seccomp profile" "default SCMP_ACT_ALLOW
needed but denied: 
denied: bpf,kexec_load,keyctl,perf_event_open,ptrace,setns,userfaultfd" "$(/usr/bin/node -e '
const p = JSON.parse(require("fs").readFileSync("deploy/seccomp/calcroute-ns.json", "utf8"));
const denied = new Set(p.syscalls.filter((r) => r.action !== "SCMP_ACT_ALLOW").flatMap((r) => r.names));
const needed = ["clone", "clone3", "unshare", "mount", "umount2", "pivot_root", "open_tree",
                "move_mount", "mount_setattr", "seccomp", "prctl", "pidfd_open", "memfd_create",
                "execve", "execveat", "sethostname", "setdomainname"];
console.log("default " + p.defaultAction);
console.log("needed but denied: " + needed.filter((n) => denied.has(n)).join(","));
console.log("denied: " + ["bpf", "kexec_load", "keyctl", "perf_event_open", "ptrace", "setns",
                         "userfaultfd"].filter((n) => denied.has(n)).join(","));
' 2>&1)"

if command -v apparmor_parser >/dev/null 2>&1; then
    # -Q: parse and compile only, nothing is loaded into this kernel.
    expect "the AppArmor profile compiles" "exit 0" \
        "$(apparmor_parser -Q -K -o /dev/null deploy/apparmor/calcroute-serve >/dev/null 2>&1; echo "exit $?")"
    sed 's/^  file,$/  filez,/' deploy/apparmor/calcroute-serve >"$tmp/aa"
    apparmor_parser -Q -K -o /dev/null "$tmp/aa" >/dev/null 2>&1 &&
        bad "a broken AppArmor profile compiles"
    ok
else
    unavailable "AppArmor profile" "no apparmor_parser (Debian's apparmor package)"
fi
finish
