package report

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Machine is where the run happened.
type Machine struct {
	Cores     int    `json:"cores"`
	CPU       string `json:"cpu"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
}

// ThisMachine describes the machine the harness runs on.
func ThisMachine() Machine {
	return Machine{Cores: runtime.NumCPU(), CPU: cpuModel(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// GitCommit is the checkout's HEAD, with "-dirty" when the tree has
// changes, or "unknown" outside a git checkout.
func GitCommit(dir string) string {
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(head))
	if status, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); err == nil && len(status) > 0 {
		commit += "-dirty"
	}
	return commit
}
