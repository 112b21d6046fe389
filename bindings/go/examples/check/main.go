// Command check checks a shardplan.v1 document and prints the verdict and
// each diagnostic with its help and fix, where the engine knows them; it exits
// with 1 when the document fails. The README's example as a program:
//
//	go run ./examples/check ../../examples/tiny-llama-broken.json
package main

import (
	"fmt"
	"log"
	"os"

	shardplan "github.com/shardplan/shardplan/bindings/go"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: check FILE")
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	doc, err := shardplan.Parse(data, nil) // an error only for API misuse or out of memory
	if err != nil {
		log.Fatal(err)
	}
	defer doc.Close()
	res, err := doc.Check(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	fmt.Println("shardplan", shardplan.Version(), "ok:", res.OK())
	for _, d := range res.Diagnostics() {
		fmt.Println(d)
		if d.Help != nil {
			fmt.Println("  help:", *d.Help)
		}
		for _, op := range d.Fix {
			fmt.Println("  fix:", op)
		}
	}
	if !res.OK() {
		res.Close()
		doc.Close()
		os.Exit(1)
	}
}
